/* The tools' network and model files. */
#define _DEFAULT_SOURCE /* strcasecmp */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "model_io.h"
#include "text_file.h"
#include "tool_error.h"

int is_onnx(const char *path)
{
    size_t len = path ? strlen(path) : 0;
    return len > 5 && !strcasecmp(path + len - 5, ".onnx");
}

clg_status load_model(clg_ctx *ctx, const char *path, clg_net **net)
{
    return is_onnx(path) ? clg_net_import_onnx(ctx, path, net) : clg_net_load(ctx, path, net);
}

int is_model_file(const char *path)
{
    char magic[8] = "";
    FILE *f = path ? fopen(path, "rb") : NULL;
    size_t got = f ? fread(magic, 1, sizeof magic, f) : 0;
    if (f)
        fclose(f);
    return got == sizeof magic && !memcmp(magic, "CLGRADM", sizeof magic);
}

int newest_checkpoint(const char *path, char *out, size_t cap)
{
    DIR *d = opendir(path);
    if (!d)
        return snprintf(out, cap, "%s", path) < (int)cap;
    char best[1024] = "";
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (!strncmp(e->d_name, "checkpoint-", 11) && n > 5 && n < sizeof best &&
            !strcmp(e->d_name + n - 5, ".clgm") && strcmp(e->d_name, best) > 0)
            memcpy(best, e->d_name, n + 1);
    }
    closedir(d);
    return best[0] && snprintf(out, cap, "%s/%s", path, best) < (int)cap;
}

clg_status make_net(const char *tool, clg_ctx *ctx, const char *path, const char *default_text,
                    clg_net **net, int *trained)
{
    *trained = 0;
    clg_status st;
    struct stat sb;
    if (path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s is a folder: give a network file (text, .clgm or .onnx)\n", tool,
                path);
        return CLG_ERR_INVALID_ARG;
    }
    if (is_onnx(path) || is_model_file(path)) { /* its weights kept: fine-tuning */
        st = load_model(ctx, path, net);
        *trained = st == CLG_OK;
    } else {
        char *text = path ? read_text_file(path) : NULL;
        if (path && !text) {
            fprintf(stderr, "%s: cannot read %s\n", tool, path);
            return CLG_ERR_IO;
        }
        st = clg_net_parse(ctx, text ? text : default_text, net);
        free(text);
    }
    if (st != CLG_OK)
        fprintf(stderr, "%s: %s: %s\n", tool, path ? path : "the default network",
                tool_message(st, clg_ctx_last_error(ctx)));
    return st;
}
