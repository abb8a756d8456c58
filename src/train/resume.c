/* Resuming from a checkpoint: the newest one of a folder, its network and training state,
 * the metrics log trimmed to it, then the training loop. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_internal.h"

/* A folder: its checkpoints, newest first; a file: itself. *out (n paths) is malloc'd, each
 * path too. */
static clg_status checkpoints_of(clg_ctx *ctx, const char *path, char ***out, size_t *n)
{
    DIR *d = opendir(path);
    int ok;
    if (d) {
        closedir(d);
        ok = clg__checkpoint_list(path, 0, out, n);
    } else {
        *n = 0;
        ok = (*out = clg__malloc(sizeof **out)) && ((*out)[0] = clg__strdup(path));
        *n = ok;
    }
    if (!ok)
        return clg__oom(ctx, "clg_train_resume");
    if (!*n)
        return clg__fail(ctx, CLG_ERR_IO, "clg_train_resume: no checkpoint-*.clgm in %s", path);
    return CLG_OK;
}

/* The newest checkpoint of the list that loads (a folder's newest may be damaged: a disk
 * that filled, a copy cut short); those passed over are described in *skipped. */
static clg_status load_newest(clg_ctx *ctx, char **list, size_t n, clg_net **net, void **blob,
                              size_t *len, size_t *used, char *skipped, size_t cap)
{
    clg_status st = CLG_ERR_IO;
    size_t said = 0;
    char first[CLG__ERR_TEXT] = "";
    skipped[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        st = clg__model_load(ctx, list[i], net, blob, len);
        if (st == CLG_OK && !*blob)
            st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_train_resume: %s is a model without "
                           "training state (not a checkpoint)", list[i]);
        if (st == CLG_OK) {
            *used = i;
            return CLG_OK;
        }
        clg_net_destroy(*net);
        *net = NULL;
        if (!i)
            snprintf(first, sizeof first, "%s", clg_ctx_last_error(ctx));
        if (said < cap)
            said += (size_t)snprintf(skipped + said, cap - said, "%s%s (%s)", i ? "; " : "",
                                     list[i], clg_ctx_last_error(ctx));
    }
    if (n > 1) /* none loads: the newest's reason, and that every other one was tried */
        clg__fail(ctx, st, "%s; none of the %zu older checkpoints there loads either", first,
                  n - 1);
    return st;
}

/* The metrics log of a resumed run: rows past the checkpoint (the interrupted run went on
 * after it) are dropped, so that the log reads as one run. Rewritten beside, then renamed. */
static clg_status trim_log(clg__trainer *t)
{
    if (!t->log)
        return CLG_OK;
    const char *path = t->o.metrics_log;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.trim", path);
    fclose(t->log);
    t->log = NULL;
    FILE *in = fopen(path, "r"), *out = in ? fopen(tmp, "w") : NULL;
    int ok = in && out;
    char line[1024];
    while (ok && fgets(line, sizeof line, in)) {
        unsigned long long it = 0;
        char kind[32];
        int epoch;
        int row = sscanf(line, "%31[a-z],%d,%llu,", kind, &epoch, &it) == 3;
        if (!row || it <= (unsigned long long)t->step)
            ok = fputs(line, out) >= 0;
    }
    if (in)
        fclose(in);
    if (out)
        ok &= fclose(out) == 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok)
        remove(tmp);
    t->log = fopen(path, "a");
    if (!t->log)
        return clg__fail(t->ctx, CLG_ERR_IO, "clg_train_resume: cannot write the metrics log %s",
                         path);
    return CLG_OK;
}

clg_status clg_train_resume(clg_ctx *ctx, const char *checkpoint_file, clg_datastore *train,
                            clg_datastore *val, const clg_train_options *options, clg_net **net,
                            clg_train_report *report_out)
{
    if (report_out)
        memset(report_out, 0, sizeof *report_out);
    if (net)
        *net = NULL;
    if (!ctx || !checkpoint_file || !train || !options || !net)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_train_resume: ctx, checkpoint, train, options and net must not be NULL");
    char **list = NULL;
    size_t n = 0, used = 0;
    clg_status st = checkpoints_of(ctx, checkpoint_file, &list, &n);
    void *blob = NULL;
    size_t len = 0;
    char skipped[2048];
    if (st == CLG_OK)
        st = load_newest(ctx, list, n, net, &blob, &len, &used, skipped, sizeof skipped);
    if (st != CLG_OK) {
        clg__checkpoint_list_free(list, n);
        return st;
    }
    const char *path = list[used];
    clg__trainer t;
    memset(&t, 0, sizeof t);
    if (st == CLG_OK)
        st = clg__trainer_init(&t, *net, train, val, options, 1);
    if (st == CLG_OK)
        st = clg__train_state_load(&t, blob, len);
    free(blob);
    if (st == CLG_OK) {
        snprintf(t.resumed_from, sizeof t.resumed_from, "%s", path);
        snprintf(t.resume_skipped, sizeof t.resume_skipped, "%s", skipped);
        st = trim_log(&t);
    }
    clg__checkpoint_list_free(list, n);
    return clg__train_finish(&t, st, report_out);
}
