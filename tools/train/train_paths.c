/* clgrad-train's output files: a long run must not end in "cannot write" with its model gone,
 * so every output is tried before training and the final save has places to fall back to. */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train_paths.h"
#include "tool_error.h"

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
               {"--save-models", c->sweep ? c->save_models : NULL, 1},
               {"--export-onnx", c->evaluate || c->sweep ? NULL : c->export_onnx, 0}};
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
    fprintf(stderr, "clgrad-train: saving the model to %s: %s\n", path, tool_message(st, clg_ctx_last_error(clg_net_ctx(net))));
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

int path_exists(const char *dir, const char *name, int want_dir)
{
    char path[4352];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    return stat(path, &sb) == 0 && (want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
}

/* IDX files of a subset ("train", "t10k"), plain or gzipped. */
static int idx_files(const char *dir, const char *prefix)
{
    char images[64], labels[64], gz[80];
    snprintf(images, sizeof images, "%s-images-idx3-ubyte", prefix);
    snprintf(labels, sizeof labels, "%s-labels-idx1-ubyte", prefix);
    int have = path_exists(dir, images, 0);
    snprintf(gz, sizeof gz, "%s.gz", images);
    have = have || path_exists(dir, gz, 0);
    int lab = path_exists(dir, labels, 0);
    snprintf(gz, sizeof gz, "%s.gz", labels);
    return have && (lab || path_exists(dir, gz, 0));
}

#define LAYOUTS "IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-" \
                "idx3-ubyte, t10k-labels-idx1-ubyte, each plain or .gz), or image folders " \
                "DIR/train and DIR/test with a sub-folder per class"

int data_readable(const cli *c)
{
    struct stat sb;
    /* the model or checkpoint to start from, before any device is opened */
    const struct {
        const char *flag, *path, *what;
    } inputs[] = {{"--evaluate", c->evaluate, "a saved model (.clgm or .onnx)"},
                  {"--resume", c->resume, "a checkpoint file, or a folder of them"},
                  {"--net", c->net_file, "a network file (text, .clgm or .onnx)"}};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        if (inputs[i].path && stat(inputs[i].path, &sb) != 0) {
            fprintf(stderr, "clgrad-train: %s %s: %s; it takes %s\n", inputs[i].flag,
                    inputs[i].path, strerror(errno), inputs[i].what);
            return 0;
        }
    if (stat(c->data, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "clgrad-train: --data %s: %s; it takes a folder of " LAYOUTS "\n", c->data,
                stat(c->data, &sb) != 0 ? strerror(errno) : "not a folder");
        return 0;
    }
    int need_train = !c->evaluate && !c->summary;
    int idx = idx_files(c->data, "t10k") && (!need_train || idx_files(c->data, "train"));
    int folders = path_exists(c->data, "test", 1) &&
                  (!need_train || path_exists(c->data, "train", 1));
    if (idx || folders)
        return 1;
    /* say what is there: class folders without train/ and test/ are the usual slip */
    char subs[512] = "";
    size_t n = 0, len = 0;
    struct dirent **names = NULL;
    int count = scandir(c->data, &names, NULL, alphasort); /* sorted: the same words each run */
    for (int i = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        if (name[0] != '.' && path_exists(c->data, name, 1) && n++ < 4 && len < sizeof subs)
            len += (size_t)snprintf(subs + len, sizeof subs - len, "%s%s", n > 1 ? ", " : "",
                                    name);
        free(names[i]);
    }
    free(names);
    if (n)
        fprintf(stderr, "clgrad-train: --data %s holds %zu folder%s (%s%s) but no %s: class "
                "folders go under %s/train and %s/test; it takes " LAYOUTS "\n", c->data, n,
                n == 1 ? "" : "s", subs, n > 4 ? ", ..." : "",
                need_train ? "train/ and test/" : "test/", c->data, c->data);
    else
        fprintf(stderr, "clgrad-train: --data %s holds no data set it reads; it takes " LAYOUTS
                "\n", c->data);
    return 0;
}
