/* clgrad-predict: the top classes, with names and probabilities, of image files under a saved
 * model. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/clgrad.h"
#include "json_out.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: clgrad-predict [--top K] [--devices FILTER] [--json] MODEL IMAGE...\n"
               "Prints the K (default 3) most likely classes of each image (PNG, JPEG, BMP or\n"
               "PNM; converted to the model's channels and resized to its input size).\n"
               "  --help, --version\n");
}

int main(int argc, char **argv)
{
    size_t k = 3;
    const char *filter = NULL;
    int json = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("clgrad-predict %s\n", clg_version());
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--top") && i + 1 < argc) {
            char *end;
            k = strtoul(argv[++i], &end, 10);
            if (*end || !k) {
                fprintf(stderr, "clgrad-predict: --top needs a count >= 1\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--devices") && i + 1 < argc) {
            filter = argv[++i];
        } else {
            fprintf(stderr, "clgrad-predict: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (argc - i < 2) {
        usage(stderr);
        return 2;
    }
    const char *model = argv[i++];
    clg_device_info *all = NULL;
    size_t n = 0, count = 0;
    clg_device_info *chosen = NULL;
    clg_ctx *ctx = NULL;
    clg_net *net = NULL;
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK)
        st = clg_devices_select(all, n, CLG_ENV_AUTO, filter, &chosen, &count);
    if (st == CLG_OK) {
        clg_ctx_options co = clg_ctx_options_default();
        st = clg_ctx_create(&chosen[0], &co, &ctx);
    }
    clg_devices_free(chosen, count);
    clg_devices_free(all, n);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-predict: %s: %s\n", clg_status_name(st), clg_last_error());
        return 1;
    }
    st = clg_net_load(ctx, model, &net);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-predict: %s: %s\n", clg_status_name(st), clg_ctx_last_error(ctx));
        clg_ctx_destroy(ctx);
        return 1;
    }
    clg_shape in = clg_net_input_shape(net);
    size_t classes = clg_net_class_count(net), per = clg_shape_numel(in);
    k = k < classes ? k : classes;
    float *image = malloc(per * sizeof *image), *prob = malloc(k * sizeof *prob);
    int32_t *top = malloc(k * sizeof *top);
    int rc = image && prob && top ? 0 : 1;
    for (; rc == 0 && i < argc; i++) {
        st = clg_image_read(argv[i], in.c, in.h, in.w, image);
        if (st == CLG_OK)
            st = clg_net_classify(net, image, 1, k, top, prob);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-predict: %s: %s: %s\n", argv[i], clg_status_name(st),
                    st == CLG_ERR_CORRUPT || st == CLG_ERR_IO ? clg_last_error()
                                                              : clg_ctx_last_error(ctx));
            rc = 1;
            break;
        }
        if (json) {
            printf("{\"image\":");
            json_string(argv[i]);
            printf(",\"top\":[");
            for (size_t j = 0; j < k; j++) {
                printf("%s{\"class\":%d,\"name\":", j ? "," : "", top[j]);
                json_string(clg_net_class_name(net, (size_t)top[j]));
                printf(",\"probability\":%.6f}", (double)prob[j]);
            }
            printf("]}\n");
        } else {
            printf("%s\n", argv[i]);
            for (size_t j = 0; j < k; j++)
                printf("  %6.2f%%  %s (class %d)\n", 100.0 * prob[j],
                       clg_net_class_name(net, (size_t)top[j]), top[j]);
        }
    }
    free(image);
    free(prob);
    free(top);
    clg_net_destroy(net);
    clg_ctx_destroy(ctx);
    return rc;
}
