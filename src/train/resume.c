/* Resuming from a checkpoint: the newest one of a folder, its network and training state,
 * the metrics log trimmed to it, then the training loop. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_internal.h"

/* A folder: its checkpoint with the largest name (names sort by epoch and iteration); a file:
 * itself. *out is malloc'd. */
static clg_status newest_checkpoint(clg_ctx *ctx, const char *path, char **out)
{
    *out = NULL;
    DIR *d = opendir(path);
    if (!d) {
        *out = clg__strdup(path);
        return *out ? CLG_OK : clg__oom(ctx, "clg_train_resume");
    }
    char best[1024] = "";
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (!strncmp(e->d_name, "checkpoint-", 11) && n > 5 && !strcmp(e->d_name + n - 5, ".clgm") &&
            strcmp(e->d_name, best) > 0 && n < sizeof best)
            memcpy(best, e->d_name, n + 1);
    }
    closedir(d);
    if (!best[0])
        return clg__fail(ctx, CLG_ERR_IO, "clg_train_resume: no checkpoint-*.clgm in %s", path);
    size_t len = strlen(path) + strlen(best) + 2;
    *out = clg__malloc(len);
    if (!*out)
        return clg__oom(ctx, "clg_train_resume");
    snprintf(*out, len, "%s/%s", path, best);
    return CLG_OK;
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
    char *path;
    clg_status st = newest_checkpoint(ctx, checkpoint_file, &path);
    if (st != CLG_OK)
        return st;
    void *blob = NULL;
    size_t len = 0;
    st = clg__model_load(ctx, path, net, &blob, &len);
    if (st == CLG_OK && !blob)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_train_resume: %s is a model without "
                       "training state (not a checkpoint)", path);
    clg__trainer t;
    memset(&t, 0, sizeof t);
    if (st == CLG_OK)
        st = clg__trainer_init(&t, *net, train, val, options, 1);
    if (st == CLG_OK)
        st = clg__train_state_load(&t, blob, len);
    free(blob);
    if (st == CLG_OK) {
        snprintf(t.resumed_from, sizeof t.resumed_from, "%s", path);
        st = trim_log(&t);
    }
    free(path);
    return clg__train_finish(&t, st, report_out);
}
