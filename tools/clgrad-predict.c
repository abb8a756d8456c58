/* clgrad-predict: the top classes, with names and probabilities, of image files and folders
 * under a saved model, with the accuracy where folders name the classes; or any layer's
 * outputs for them, written to a file (feature extraction). */
#define _DEFAULT_SOURCE /* scandir, alphasort, strcasecmp */
#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "clgrad/clgrad.h"
#include "json_out.h"
#include "model_io.h"
#include "opts.h"
#include "pocl_pin.h"
#include "predict_dense.h"
#include "tool_error.h"

typedef struct settings {
    size_t k;
    const char *filter, *layer, *out, *npy;
    int json;
    size_t shorter; /* --resize-shorter: torchvision's Resize(S) + CenterCrop, or 0 */
    dense_settings dense; /* image-to-image models */
} settings;

static const opt_def defs[] = {
    {OPT_SIZE, "top", offsetof(settings, k), 1, 100000, .value = "K",
     .help = "the K most likely classes of each image (default 3)"},
    {OPT_FLAG, "json", offsetof(settings, json), 0, 0, .help = "the results as JSON"},
    {OPT_TEXT, "devices", offsetof(settings, filter), 0, 0, .value = "FILTER",
     .help = "the device to run on (see clgrad-devices)"},
    {OPT_TEXT, "npy", offsetof(settings, npy), 0, 0, .value = "FILE.npy",
     .help = "the images from a float32 NumPy array, N x C x H x W (or N x H x W), as the "
             "model takes them"},
    {OPT_TEXT, "activations", offsetof(settings, layer), 0, 0, .value = "LAYER",
     .help = "write the outputs of the layer named LAYER (see clgrad-train --summary; "
             "\"l3\" is the third) for the images to --out FILE: NumPy .npy when FILE ends in "
             ".npy, else raw: the 8 bytes \"CLGACT1\\0\", then N, C, H, W as little-endian u64, "
             "then N*C*H*W little-endian float32"},
    {OPT_TEXT, "out", offsetof(settings, out), 0, 0, .value = "FILE",
     .help = "with --activations: the file"},
    {OPT_TEXT, "out-dir", offsetof(settings, dense.out_dir), 0, 0, .value = "DIR",
     .help = "image-to-image models (segmentation, denoising): each image's result as\n"
             "DIR/<name>.png, from the whole image at its own size: the label map (each\n"
             "pixel's class as its gray value) or the output image"},
    {OPT_FLAG, "overlay", offsetof(settings, dense.overlay), 0, 0,
     .help = "segmentation: also DIR/<name>-overlay.png, the image tinted by class"},
    {OPT_FLAG, "residual", offsetof(settings, dense.residual), 0, 0,
     .help = "the model predicts the noise (DnCNN, clgrad-train --denoise): the result is\n"
             "the image minus it"},
    {OPT_SIZE, "resize-shorter", offsetof(settings, shorter), 1, 16384, .value = "S",
     .help = "resize each image's shorter side to S, then take the centre at the model's\n"
             "input size (torchvision's Resize(256) + CenterCrop(224) for ImageNet models);\n"
             "default: the whole image resized to the input size"},
};

static const opt_tool tool = {
    "clgrad-predict", NULL,
    "usage: clgrad-predict [--top K] [--devices FILTER] [--json] MODEL IMAGE|FOLDER...\n"
    "       clgrad-predict [--top K] [--json] --npy FILE.npy MODEL\n"
    "       clgrad-predict --activations LAYER --out FILE --npy FILE.npy MODEL\n"
    "       clgrad-predict --activations LAYER --out FILE [--devices FILTER] MODEL IMAGE|FOLDER...\n"
    "Prints the K most likely classes of each image (PNG, JPEG, BMP or PNM; converted to\n"
    "the model's channels and resized to its input size). A folder stands for every image\n"
    "under it, at any depth, in name order; where the folders right under it are named\n"
    "after the model's classes (a labelled tree, as clgrad-train reads), their images are\n"
    "labelled and the accuracy is printed. An unreadable image is reported on its own line\n"
    "and the others go on (exit status 1). Options may come before or after the operands;\n"
    "after \"--\" every argument is an operand.\n",
    "  -h, --help, --version\n", defs, sizeof defs / sizeof defs[0], 1, (size_t)-1,
    "MODEL IMAGE|FOLDER..."};

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

/* The outputs of `layer` for the n images in x, written to out. 0 ok, 1 failure. */
static int write_layer(clg_net *net, clg_ctx *ctx, const char *layer, const char *out,
                       const float *x, size_t n)
{
    clg_shape s;
    float probe;
    /* the layer's shape first: no samples, no output */
    clg_status st = clg_net_activations(net, x, 0, layer, &probe, 0, &s);
    float *y = st == CLG_OK ? malloc(n * clg_shape_numel(s) * sizeof *y) : NULL;
    if (st == CLG_OK && !y)
        st = CLG_ERR_OUT_OF_HOST_MEMORY;
    if (st == CLG_OK)
        st = clg_net_activations(net, x, n, layer, y, n * clg_shape_numel(s), &s);
    int rc = st != CLG_OK;
    if (st != CLG_OK)
        fprintf(stderr, "clgrad-predict: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
    if (!rc && write_activations(out, y, n, s)) {
        fprintf(stderr, "clgrad-predict: cannot write %s\n", out);
        rc = 1;
    }
    if (!rc)
        printf("%s: %zu x %zux%zux%zu (CxHxW) from layer %s\n", out, n, s.c, s.h, s.w, layer);
    free(y);
    return rc;
}

/* --activations: every image read, the layer's outputs written. 0 ok, 1 failure. */
static int activations(clg_net *net, clg_ctx *ctx, const char *layer, const char *out,
                       char **images, size_t n, size_t shorter)
{
    clg_shape in = clg_net_input_shape(net);
    size_t per = clg_shape_numel(in);
    float *x = malloc(n * per * sizeof *x);
    clg_status st = x ? CLG_OK : CLG_ERR_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n && st == CLG_OK; i++)
        if ((st = clg_image_read_cropped(images[i], in.c, shorter, in.h, in.w, x + i * per)) !=
            CLG_OK)
            fprintf(stderr, "clgrad-predict: %s: %s\n", images[i], tool_message(st, clg_last_error()));
    if (st == CLG_ERR_OUT_OF_HOST_MEMORY)
        fprintf(stderr, "clgrad-predict: out of host memory\n");
    int rc = st == CLG_OK ? write_layer(net, ctx, layer, out, x, n) : 1;
    free(x);
    return rc;
}

/* The images to classify: a path and, under a labelled folder, its class (else -1). */
typedef struct item {
    char *path;
    int32_t label;
} item;

typedef struct items {
    item *v;
    size_t n, cap;
} items;

static int push(items *l, const char *path, int32_t label)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        item *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return 0;
        l->v = v, l->cap = cap;
    }
    l->v[l->n].path = strdup(path);
    l->v[l->n].label = label;
    return l->v[l->n++].path != NULL;
}

static int is_image_name(const char *name)
{
    static const char *const ext[] = {".png", ".jpg", ".jpeg", ".bmp", ".pnm", ".pgm", ".ppm"};
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t e = strlen(ext[i]);
        if (len > e && !strcasecmp(name + len - e, ext[i]))
            return 1;
    }
    return 0;
}

/* Every image file under dir (sorted, any depth) with label. 0 when dir cannot be read. */
static int walk(items *l, const char *dir, int32_t label)
{
    struct dirent **names = NULL;
    int count = scandir(dir, &names, NULL, alphasort), ok = count >= 0;
    for (int i = 0; i < count; i++) {
        char path[4096];
        struct stat sb;
        const char *name = names[i]->d_name;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (name[0] != '.' && stat(path, &sb) == 0) {
            if (S_ISDIR(sb.st_mode))
                ok &= walk(l, path, label);
            else if (is_image_name(name))
                ok &= push(l, path, label);
        }
        free(names[i]);
    }
    free(names);
    return ok;
}

/* The class of a sub-folder name, or -1. */
static int32_t class_of(clg_net *net, const char *name)
{
    for (size_t k = 0; k < clg_net_class_count(net); k++)
        if (clg_class_names_equal(name, clg_net_class_name(net, k)))
            return (int32_t)k;
    return -1;
}

/* A folder argument: labelled when every folder right under it names a class of the model
 * (images beside them are then unlabelled), else every image under it unlabelled. */
static int add_folder(items *l, clg_net *net, const char *dir)
{
    struct dirent **names = NULL;
    int count = scandir(dir, &names, NULL, alphasort), labelled = count > 0, subs = 0;
    for (int i = 0; i < count; i++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (names[i]->d_name[0] != '.' && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            subs++;
            labelled &= class_of(net, names[i]->d_name) >= 0;
        }
    }
    int ok = count >= 0;
    for (int i = 0; i < count; i++) {
        char path[4096];
        struct stat sb;
        const char *name = names[i]->d_name;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (ok && name[0] != '.' && stat(path, &sb) == 0) {
            if (S_ISDIR(sb.st_mode))
                ok = walk(l, path, labelled && subs ? class_of(net, name) : -1);
            else if (is_image_name(name))
                ok = push(l, path, -1);
        }
        free(names[i]);
    }
    free(names);
    return ok;
}

/* The images the arguments name, files as they are (any name: the decoder judges them). */
static int gather(items *l, clg_net *net, char **args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        int ok = stat(args[i], &sb) == 0 && S_ISDIR(sb.st_mode) ? add_folder(l, net, args[i])
                                                                : push(l, args[i], -1);
        if (!ok) {
            fprintf(stderr, "clgrad-predict: cannot read the folder %s\n", args[i]);
            return 0;
        }
    }
    return 1;
}

static void print_result(clg_net *net, const item *it, const int32_t *top, const float *prob,
                         size_t k, int json)
{
    if (json) {
        printf("{\"image\":");
        json_string(it->path);
        if (it->label >= 0) {
            printf(",\"label\":%d,\"label_name\":", it->label);
            json_string(clg_net_class_name(net, (size_t)it->label));
        }
        printf(",\"top\":[");
        for (size_t j = 0; j < k; j++) {
            printf("%s{\"class\":%d,\"name\":", j ? "," : "", top[j]);
            json_string(clg_net_class_name(net, (size_t)top[j]));
            printf(",\"probability\":%.6f}", (double)prob[j]);
        }
        printf("]}\n");
        return;
    }
    if (it->label >= 0)
        printf("%s (%s: %s)\n", it->path, clg_net_class_name(net, (size_t)it->label),
               top[0] == it->label ? "right" : "wrong");
    else
        printf("%s\n", it->path);
    for (size_t j = 0; j < k; j++)
        printf("  %6.2f%%  %s (class %d)\n", 100.0 * prob[j],
               clg_net_class_name(net, (size_t)top[j]), top[j]);
}

#define CHUNK 64 /* images decoded, then classified at once */

/* A NumPy .npy file of little-endian float32 in C order, shaped (N, C, H, W), or (N, H, W)
 * for one channel: *data (malloc'ed) and the sizes. 0 with a reason printed. */
static int read_npy(const char *path, float **data, size_t dims[4])
{
    FILE *f = fopen(path, "rb");
    unsigned char head[10];
    char dict[4096] = "";
    int ok = f && fread(head, 1, 10, f) == 10 && !memcmp(head, "\x93NUMPY", 6) && head[6] == 1;
    size_t hl = ok ? (size_t)head[8] | (size_t)head[9] << 8 : 0;
    ok = ok && hl < sizeof dict && fread(dict, 1, hl, f) == hl;
    dict[ok ? hl : 0] = '\0';
    const char *shape = strstr(dict, "'shape': (");
    long d[4] = {0, 0, 0, 0};
    int n = shape ? sscanf(shape, "'shape': (%ld, %ld, %ld, %ld", &d[0], &d[1], &d[2], &d[3]) : 0;
    ok = ok && strstr(dict, "'descr': '<f4'") && strstr(dict, "'fortran_order': False") &&
         (n == 3 || n == 4);
    if (ok && n == 3)
        d[3] = d[2], d[2] = d[1], d[1] = 1;
    size_t total = 1;
    for (int i = 0; ok && i < 4; i++) {
        ok = d[i] > 0 && d[i] < 1 << 24 && total < ((size_t)1 << 32) / (size_t)d[i];
        dims[i] = (size_t)d[i];
        total *= ok ? (size_t)d[i] : 1;
    }
    *data = ok ? malloc(total * sizeof **data) : NULL;
    ok = ok && *data && fread(*data, sizeof **data, total, f) == total;
    if (f)
        fclose(f);
    if (!ok) {
        free(*data);
        *data = NULL;
        fprintf(stderr, "clgrad-predict: %s is not a float32 .npy array of N x C x H x W (or N "
                "x H x W) in C order\n", path);
    }
    return ok;
}

/* The .npy array's images, checked against the model's input: *x (malloc'ed), d[0] of them.
 * 0 with the reason printed. */
static int npy_images(clg_net *net, const char *path, float **x, size_t d[4])
{
    if (!read_npy(path, x, d))
        return 0;
    clg_shape in = clg_net_input_shape(net);
    size_t per = clg_shape_numel(in), bad = 0;
    if (d[1] != in.c || d[2] != in.h || d[3] != in.w) {
        fprintf(stderr, "clgrad-predict: %s holds %zux%zux%zu samples (CxHxW), the model takes "
                "%zux%zux%zu\n", path, d[1], d[2], d[3], in.c, in.h, in.w);
        free(*x);
        return 0;
    }
    for (size_t j = 0; j < d[0] * per; j++)
        bad += !isfinite((*x)[j]);
    if (bad) { /* a NaN image has no class: its "probabilities" would be NaN too */
        fprintf(stderr, "clgrad-predict: %s holds %zu NaN or infinite values: refused\n", path,
                bad);
        free(*x);
        return 0;
    }
    return 1;
}

/* --npy: every row of the array classified, named FILE[i]. Returns the exit status. */
static int classify_npy(clg_net *net, clg_ctx *ctx, const char *path, size_t k, int json)
{
    float *x;
    size_t d[4];
    if (!npy_images(net, path, &x, d))
        return 1;
    clg_shape in = clg_net_input_shape(net);
    size_t classes = clg_net_class_count(net), per = clg_shape_numel(in);
    k = k < classes ? k : classes;
    float *prob = malloc(CHUNK * k * sizeof *prob);
    int32_t *top = malloc(CHUNK * k * sizeof *top);
    int rc = prob && top ? 0 : 1;
    for (size_t first = 0; rc == 0 && first < d[0]; first += CHUNK) {
        size_t m = d[0] - first < CHUNK ? d[0] - first : CHUNK;
        clg_status st = clg_net_classify(net, x + first * per, m, k, top, prob);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-predict: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
            rc = 1;
        }
        for (size_t j = 0; rc == 0 && j < m; j++) {
            char name[4200];
            snprintf(name, sizeof name, "%s[%zu]", path, first + j);
            item it = {name, -1};
            print_result(net, &it, top + j * k, prob + j * k, k, json);
        }
    }
    free(x), free(prob), free(top);
    return rc;
}

/* Classifies every item, CHUNK at a time; unreadable images are reported and left out.
 * Returns the exit status. */
static int classify_all(clg_net *net, clg_ctx *ctx, const items *l, size_t k, int json,
                        size_t shorter)
{
    clg_shape in = clg_net_input_shape(net);
    size_t classes = clg_net_class_count(net), per = clg_shape_numel(in);
    k = k < classes ? k : classes;
    float *images = malloc(CHUNK * per * sizeof *images), *prob = malloc(CHUNK * k * sizeof *prob);
    int32_t *top = malloc(CHUNK * k * sizeof *top);
    size_t at[CHUNK], failed = 0, labelled = 0, right = 0;
    if (!images || !prob || !top) {
        fprintf(stderr, "clgrad-predict: out of memory\n");
        free(images), free(prob), free(top);
        return 1;
    }
    int rc = 0;
    for (size_t first = 0; rc == 0 && first < l->n; first += CHUNK) {
        size_t m = 0, end = first + CHUNK < l->n ? first + CHUNK : l->n;
        for (size_t i = first; i < end; i++) {
            clg_status st = clg_image_read_cropped(l->v[i].path, in.c, shorter, in.h, in.w,
                                                   images + m * per);
            if (st != CLG_OK) {
                fflush(stdout);
                fprintf(stderr, "clgrad-predict: %s: %s\n", l->v[i].path,
                        tool_message(st, clg_last_error()));
                failed++;
                continue;
            }
            at[m++] = i;
        }
        clg_status st = m ? clg_net_classify(net, images, m, k, top, prob) : CLG_OK;
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-predict: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
            rc = 1;
        }
        for (size_t j = 0; rc == 0 && j < m; j++) {
            const item *it = &l->v[at[j]];
            print_result(net, it, top + j * k, prob + j * k, k, json);
            labelled += it->label >= 0;
            right += it->label >= 0 && top[j * k] == it->label;
        }
    }
    if (rc == 0 && labelled) {
        if (json)
            printf("{\"labelled\":%zu,\"right\":%zu,\"accuracy\":%.6f}\n", labelled, right,
                   (double)right / (double)labelled);
        else
            printf("Accuracy: %.2f%% (%zu of %zu labelled images)\n",
                   100.0 * (double)right / (double)labelled, right, labelled);
    }
    if (failed) {
        fflush(stdout);
        fprintf(stderr, "clgrad-predict: %zu of %zu image%s could not be read\n", failed, l->n,
                l->n == 1 ? "" : "s");
        rc = 1;
    }
    free(images), free(prob), free(top);
    return rc;
}

/* Whether the model's weights are all numbers: a diverged training's are not, and every
 * "probability" it gave would be NaN. Said when not. */
static int weights_finite(clg_net *net, const char *model)
{
    size_t n = clg_net_param_count(net, CLG_PARAMS_LEARNABLE), bad = 0;
    float *w = malloc((n ? n : 1) * sizeof *w);
    if (!w || clg_net_get_params(net, CLG_PARAMS_LEARNABLE, w, n) != CLG_OK) {
        free(w);
        return 1; /* unread: the prediction's own errors will say */
    }
    for (size_t i = 0; i < n; i++)
        bad += !isfinite(w[i]);
    free(w);
    if (bad)
        fprintf(stderr, "clgrad-predict: %s: %zu of its %zu weights are NaN or infinite (its "
                "training diverged?): it cannot classify anything\n", model, bad, n);
    return !bad;
}

/* Everything after the options: the model on its device, then the images. */
static int predict(const settings *set, char **ops, size_t nops)
{
    size_t k = set->k;
    const char *filter = set->filter, *layer = set->layer, *out = set->out, *npy = set->npy;
    int json = set->json;
    const char *model = ops[0];
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
        fprintf(stderr, "clgrad-predict: %s\n", tool_message(st, clg_last_error()));
        return 1;
    }
    st = load_model(ctx, model, &net);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-predict: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
        clg_ctx_destroy(ctx);
        return 1;
    }
    if (!weights_finite(net, model)) {
        clg_net_destroy(net);
        clg_ctx_destroy(ctx);
        return 1;
    }
    clg_shape in = clg_net_input_shape(net);
    if (set->shorter && (set->shorter < in.h || set->shorter < in.w)) {
        fprintf(stderr, "clgrad-predict: --resize-shorter %zu is less than the model's input "
                "%zux%zu: the crop must fit\n", set->shorter, in.h, in.w);
        clg_net_destroy(net);
        clg_ctx_destroy(ctx);
        return 2;
    }
    if (npy) {
        float *x = NULL;
        size_t d[4];
        int rc = !layer ? classify_npy(net, ctx, npy, k, json)
                 : npy_images(net, npy, &x, d) ? write_layer(net, ctx, layer, out, x, d[0]) : 1;
        free(x);
        clg_net_destroy(net);
        clg_ctx_destroy(ctx);
        return rc;
    }
    items l = {0};
    int rc = gather(&l, net, ops + 1, nops - 1) ? 0 : 1;
    if (rc == 0 && !l.n) {
        fprintf(stderr, "clgrad-predict: no images (PNG, JPEG, BMP or PNM files) found\n");
        rc = 1;
    }
    if (rc == 0 && clg_net_task(net) != CLG_TASK_CLASSIFICATION && !layer) {
        char **paths = malloc(l.n * sizeof *paths);
        for (size_t j = 0; paths && j < l.n; j++)
            paths[j] = l.v[j].path;
        dense_settings ds = set->dense;
        ds.json = json;
        rc = paths ? predict_dense(net, paths, l.n, &ds) : 1;
        free(paths);
    } else if (rc == 0 && layer) {
        char **paths = malloc(l.n * sizeof *paths);
        for (size_t j = 0; paths && j < l.n; j++)
            paths[j] = l.v[j].path;
        rc = paths ? activations(net, ctx, layer, out, paths, l.n, set->shorter) : 1;
        free(paths);
    } else if (rc == 0) {
        rc = classify_all(net, ctx, &l, k, json, set->shorter);
    }
    for (size_t j = 0; j < l.n; j++)
        free(l.v[j].path);
    free(l.v);
    clg_net_destroy(net);
    clg_ctx_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    pocl_pin_threads(1); /* before the first OpenCL call: see pocl_pin.h */
    settings set = {3, NULL, NULL, NULL, NULL, 0, 0, {NULL, 0, 0, 0}};
    size_t nops = 0;
    int rc = opts_parse(&tool, argc, argv, &set, &nops);
    char **ops = argv + 1;
    if (rc == 0 && set.npy && nops > 1) {
        fprintf(stderr, "clgrad-predict: --npy classifies the array's images: give the model "
                "alone, not %s too\n", ops[1]);
        rc = 2;
    } else if (rc == 0 && ((!set.npy && nops < 2) || !set.layer != !set.out)) {
        fprintf(stderr, "clgrad-predict: %s\n",
                !set.layer != !set.out ? "--activations LAYER and --out FILE go together"
                : "expected MODEL and images or folders (clgrad-predict --help says more)");
        rc = 2;
    }
    if (rc == 0)
        rc = predict(&set, ops, nops);
    return rc < 0 ? 0 : rc;
}
