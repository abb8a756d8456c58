/* clgrad-train's output files: a long run must not end in "cannot write" with its model gone,
 * so every output is tried before training and the final save has places to fall back to. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train_outputs.h"

/* Whether a file can be created in folder dir (a probe file, removed at once: permission bits
 * say nothing for root or read-only file systems). */
static int folder_writable(const char *dir, char *why, size_t cap)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        snprintf(why, cap, "%s: %s", dir, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(why, cap, "%s is not a folder", dir);
        return 0;
    }
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/.clgrad-probe-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) {
        snprintf(why, cap, "cannot create files in %s: %s", dir, strerror(errno));
        return 0;
    }
    close(fd);
    unlink(probe);
    return 1;
}

/* A file at path: not a folder, and its folder writable. */
static int file_writable(const char *path, char *why, size_t cap)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(why, cap, "%s is a folder", path);
        return 0;
    }
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    return folder_writable(dirname(copy), why, cap);
}

/* A folder that mkdir -p will make: the nearest part of path that exists must be a writable
 * folder. */
static int folder_creatable(const char *path, char *why, size_t cap)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    struct stat sb;
    while (stat(copy, &sb) != 0 && strcmp(copy, ".") && strcmp(copy, "/")) {
        char up[4096];
        snprintf(up, sizeof up, "%s", copy);
        snprintf(copy, sizeof copy, "%s", dirname(up));
    }
    return folder_writable(copy, why, cap);
}

int outputs_writable(const cli *c)
{
    const struct {
        const char *flag, *path;
        int folder;
    } out[] = {{"--save", c->evaluate || c->sweep ? NULL : c->save, 0},
               {"--plot", c->evaluate ? NULL : c->plot, 0},
               {"--log", c->evaluate ? NULL : c->o.metrics_log, 0},
               {"--results", c->sweep ? c->results : NULL, 0},
               {"--checkpoint-path", c->evaluate ? NULL : c->o.checkpoint_path, 1},
               {"--save-models", c->sweep ? c->save_models : NULL, 1}};
    int ok = 1;
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        char why[4400];
        if (out[i].path && !(out[i].folder ? folder_creatable(out[i].path, why, sizeof why)
                                           : file_writable(out[i].path, why, sizeof why))) {
            fprintf(stderr, "clgrad-train: %s %s cannot be written: %s\n", out[i].flag,
                    out[i].path, why);
            ok = 0;
        }
    }
    return ok;
}

int save_model(clg_net *net, const char *path, const cli *c)
{
    clg_status st = clg_net_save(net, path);
    if (st == CLG_OK) {
        printf("Model saved to %s\n", path);
        return 0;
    }
    fprintf(stderr, "clgrad-train: saving the model to %s: %s: %s\n", path, clg_status_name(st),
            clg_ctx_last_error(clg_net_ctx(net)));
    char copy[4096], rescue[4400];
    snprintf(copy, sizeof copy, "%s", path);
    const char *name = basename(copy);
    const char *dirs[2] = {c->o.checkpoint_path, "."};
    for (int i = 0; i < 2; i++) {
        if (!dirs[i])
            continue;
        snprintf(rescue, sizeof rescue, "%s/%s", dirs[i], *name && strcmp(name, "/") ?
                 name : "clgrad-model.clgm");
        if (clg_net_save(net, rescue) == CLG_OK) {
            fprintf(stderr, "clgrad-train: the model was saved to %s instead\n", rescue);
            return 1;
        }
    }
    fprintf(stderr, "clgrad-train: the model could not be saved anywhere%s\n",
            c->o.checkpoint_path ? " (the last checkpoint holds it as of its iteration)" : "");
    return 1;
}
