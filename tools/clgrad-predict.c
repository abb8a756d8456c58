/* clgrad-predict: the top classes, with names and probabilities, of image files under a saved
 * model; or any layer's outputs for them, written to a file (feature extraction). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/clgrad.h"
#include "json_out.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: clgrad-predict [--top K] [--devices FILTER] [--json] MODEL IMAGE...\n"
               "       clgrad-predict --activations LAYER --out FILE [--devices FILTER] MODEL IMAGE...\n"
               "Prints the K (default 3) most likely classes of each image (PNG, JPEG, BMP or\n"
               "PNM; converted to the model's channels and resized to its input size).\n"
               "  --activations LAYER  write the outputs of the layer named LAYER (see clgrad-train\n"
               "                       --summary; \"l3\" is the third) for the images to FILE:\n"
               "                       NumPy .npy when FILE ends in .npy, else raw: the 8 bytes\n"
               "                       \"CLGACT1\\0\", then N, C, H, W as little-endian u64, then\n"
               "                       N*C*H*W little-endian float32\n"
               "  --help, --version\n");
}

static void put_u64(FILE *f, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    fwrite(b, 1, 8, f);
}

/* n x shape floats to path as .npy (version 1.0: magic, header length, a Python dict padded
 * to 64 bytes) or in the raw form above. 0 on success. Assumes a little-endian host, as every
 * OpenCL host clgrad runs on is. */
static int write_activations(const char *path, const float *v, size_t n, clg_shape s)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    size_t len = strlen(path);
    if (len > 4 && !strcmp(path + len - 4, ".npy")) {
        char dict[128];
        int d = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(%zu, %zu, %zu, %zu), }", n, s.c, s.h, s.w);
        size_t total = 10 + (size_t)d + 1, pad = (64 - total % 64) % 64;
        unsigned short hl = (unsigned short)(d + pad + 1);
        unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)hl,
                                  (unsigned char)(hl >> 8)};
        fwrite(head, 1, sizeof head, f);
        fwrite(dict, 1, (size_t)d, f);
        for (size_t i = 0; i < pad; i++)
            fputc(' ', f);
        fputc('\n', f);
    } else {
        fwrite("CLGACT1", 1, 8, f);
        put_u64(f, n), put_u64(f, s.c), put_u64(f, s.h), put_u64(f, s.w);
    }
    fwrite(v, sizeof *v, n * clg_shape_numel(s), f);
    int bad = ferror(f);
    return (fclose(f) != 0) | bad;
}

/* --activations: every image read, the layer's outputs written. 0 ok, 1 failure. */
static int activations(clg_net *net, clg_ctx *ctx, const char *layer, const char *out,
                       char **images, size_t n)
{
    clg_shape in = clg_net_input_shape(net), s;
    size_t per = clg_shape_numel(in);
    float *x = malloc(n * per * sizeof *x), probe;
    clg_status st = x ? CLG_OK : CLG_ERR_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n && st == CLG_OK; i++)
        if ((st = clg_image_read(images[i], in.c, in.h, in.w, x + i * per)) != CLG_OK)
            fprintf(stderr, "clgrad-predict: %s: %s: %s\n", images[i], clg_status_name(st),
                    clg_last_error());
    if (st == CLG_OK) /* the layer's shape first: no samples, no output */
        st = clg_net_activations(net, x, 0, layer, &probe, 0, &s);
    float *y = st == CLG_OK ? malloc(n * clg_shape_numel(s) * sizeof *y) : NULL;
    if (st == CLG_OK && !y)
        st = CLG_ERR_OUT_OF_HOST_MEMORY;
    if (st == CLG_OK)
        st = clg_net_activations(net, x, n, layer, y, n * clg_shape_numel(s), &s);
    int rc = st != CLG_OK;
    if (st != CLG_OK && st != CLG_ERR_CORRUPT && st != CLG_ERR_IO)
        fprintf(stderr, "clgrad-predict: %s: %s\n", clg_status_name(st), clg_ctx_last_error(ctx));
    if (!rc && write_activations(out, y, n, s)) {
        fprintf(stderr, "clgrad-predict: cannot write %s\n", out);
        rc = 1;
    }
    if (!rc)
        printf("%s: %zu x %zux%zux%zu (CxHxW) from layer %s\n", out, n, s.c, s.h, s.w, layer);
    free(x);
    free(y);
    return rc;
}

int main(int argc, char **argv)
{
    size_t k = 3;
    const char *filter = NULL, *layer = NULL, *out = NULL;
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
        } else if (!strcmp(argv[i], "--activations") && i + 1 < argc) {
            layer = argv[++i];
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else {
            fprintf(stderr, "clgrad-predict: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (argc - i < 2 || !layer != !out) {
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
    if (layer) {
        int rc = activations(net, ctx, layer, out, argv + i, (size_t)(argc - i));
        clg_net_destroy(net);
        clg_ctx_destroy(ctx);
        return rc;
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
