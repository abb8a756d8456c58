/* The tools' network and model files. */
#define _DEFAULT_SOURCE /* strcasecmp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model_io.h"
#include "text_file.h"

int is_onnx(const char *path)
{
    size_t len = path ? strlen(path) : 0;
    return len > 5 && !strcasecmp(path + len - 5, ".onnx");
}

clg_status load_model(clg_ctx *ctx, const char *path, clg_net **net)
{
    return is_onnx(path) ? clg_net_import_onnx(ctx, path, net) : clg_net_load(ctx, path, net);
}

clg_status make_net(const char *tool, clg_ctx *ctx, const char *path, const char *default_text,
                    clg_net **net, int *trained)
{
    *trained = 0;
    clg_status st;
    if (is_onnx(path)) {
        st = clg_net_import_onnx(ctx, path, net);
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
        fprintf(stderr, "%s: %s: %s: %s\n", tool, path ? path : "the default network",
                clg_status_name(st), clg_ctx_last_error(ctx));
    return st;
}
