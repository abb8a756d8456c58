/* clgrad-make-segmentation: a semantic segmentation data set made from an IDX set (Fashion-
 * MNIST): each scene places several items on a larger dark canvas, each pixel labelled with
 * the class of the item it shows (1 + its label) or background (0). Written in the layout
 * clgrad-train reads: OUT/{train,test}/images/NNNNNN.png, OUT/{train,test}/labels/NNNNNN.png
 * (the class as the gray value) and OUT/classes.txt. Deterministic: the same seed, the same
 * files. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/clgrad.h"
#include "opts.h"
#include "png_out.h"
#include "tool_error.h"

static const char *const fashion_names[10] = {"T-shirt_top", "Trouser", "Pullover", "Dress",
                                              "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                                              "Ankle_boot"};

typedef struct settings {
    size_t train, test, size, items_lo, items_hi;
    unsigned long long seed;
    double threshold;
} settings;

static const opt_def defs[] = {
    {OPT_SIZE, "train", offsetof(settings, train), 1, UNBOUNDED, .value = "N",
     .help = "training scenes (default 2000)"},
    {OPT_SIZE, "test", offsetof(settings, test), 1, UNBOUNDED, .value = "N",
     .help = "test scenes (default 500)"},
    {OPT_SIZE, "size", offsetof(settings, size), 28, 4096, .value = "S",
     .help = "the canvas's side in pixels (default 64)"},
    {OPT_SIZE, "items", offsetof(settings, items_hi), 1, 64, .value = "N",
     .help = "items per scene: 1 to N, drawn per scene (default 3)"},
    {OPT_DOUBLE, "threshold", offsetof(settings, threshold), 0, 1, .value = "T",
     .help = "an item's pixels above T are its class, the rest of it background (default 0.1)"},
    {OPT_U64, "seed", offsetof(settings, seed), 0, 0, .value = "N", .help = "(default 1)"},
};

static const opt_tool tool = {
    "clgrad-make-segmentation", NULL,
    "usage: clgrad-make-segmentation [options] IDX_DIR OUT_DIR\n"
    "Makes a segmentation data set from the IDX set in IDX_DIR (train- and t10k- files):\n"
    "scenes of several items on a canvas, labelled per pixel (0 background, 1 + the item's\n"
    "class). Train a U-Net on it with clgrad-train --data OUT_DIR --net tools/nets/unet.net.\n",
    "  -h, --help, --version\n", defs, sizeof defs / sizeof defs[0], 2, 2, "IDX_DIR OUT_DIR"};

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Scene k of a subset: items from ds drawn by the seed, later ones over earlier ones. */
static int make_scene(clg_datastore *ds, const settings *set, uint64_t *rng, float *item,
                      float *canvas, unsigned char *labels)
{
    size_t S = set->size, n = clg_datastore_size(ds);
    clg_shape s = clg_datastore_sample_shape(ds);
    memset(canvas, 0, S * S * sizeof *canvas);
    memset(labels, 0, S * S);
    size_t items = set->items_lo + (size_t)(next(rng) % (set->items_hi - set->items_lo + 1));
    for (size_t i = 0; i < items; i++) {
        size_t idx = (size_t)(next(rng) % n);
        int32_t label;
        if (clg_datastore_read(ds, &idx, 1, item, &label) != CLG_OK)
            return 0;
        size_t top = (size_t)(next(rng) % (S - s.h + 1)), left = (size_t)(next(rng) % (S - s.w + 1));
        for (size_t y = 0; y < s.h; y++)
            for (size_t x = 0; x < s.w; x++) {
                float v = item[y * s.w + x];
                if (v <= set->threshold)
                    continue; /* the item's own background: what lies below shows */
                canvas[(top + y) * S + left + x] = v;
                labels[(top + y) * S + left + x] = (unsigned char)(1 + label);
            }
    }
    return 1;
}

static int write_subset(clg_datastore *ds, const settings *set, const char *out,
                        const char *subset, size_t count, uint64_t seed)
{
    char path[4300];
    size_t S = set->size;
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s/%s", out, subset, k ? "labels" : "images");
        if (!make_dir(path)) {
            fprintf(stderr, "clgrad-make-segmentation: cannot create %s: %s\n", path,
                    strerror(errno));
            return 0;
        }
    }
    clg_shape s = clg_datastore_sample_shape(ds);
    float *item = malloc(clg_shape_numel(s) * sizeof *item), *canvas = malloc(S * S * 4);
    unsigned char *labels = malloc(S * S);
    int ok = item && canvas && labels;
    uint64_t rng = seed;
    for (size_t i = 0; ok && i < count; i++) {
        ok = make_scene(ds, set, &rng, item, canvas, labels);
        if (!ok) {
            fprintf(stderr, "clgrad-make-segmentation: %s\n", clg_datastore_last_error(ds));
            break;
        }
        snprintf(path, sizeof path, "%s/%s/images/%06zu.png", out, subset, i);
        ok = write_png_planar(path, canvas, 1, S, S);
        if (ok) {
            snprintf(path, sizeof path, "%s/%s/labels/%06zu.png", out, subset, i);
            ok = write_png_bytes(path, labels, 1, S, S);
        }
        if (!ok)
            fprintf(stderr, "clgrad-make-segmentation: cannot write %s\n", path);
    }
    free(item), free(canvas), free(labels);
    return ok;
}

int main(int argc, char **argv)
{
    settings set = {2000, 500, 64, 1, 3, 1, 0.1};
    size_t nops = 0;
    int parsed = opts_parse(&tool, argc, argv, &set, &nops);
    if (parsed)
        return parsed < 0 ? 0 : parsed;
    const char *in = argv[1], *out = argv[2];
    clg_datastore *train = NULL, *test = NULL;
    clg_status st = clg_datastore_open_idx_folder(in, "train", &train);
    if (st == CLG_OK)
        st = clg_datastore_open_idx_folder(in, "test", &test);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-make-segmentation: %s\n", tool_message(st, clg_last_error()));
        clg_datastore_destroy(train);
        return 1;
    }
    clg_shape s = clg_datastore_sample_shape(train);
    size_t K = clg_datastore_class_count(train);
    int rc = 0;
    if (s.c != 1 || s.h > set.size || s.w > set.size || K > 254) {
        fprintf(stderr, "clgrad-make-segmentation: the items must be gray, at most %zu pixels "
                "a side (--size), with fewer than 255 classes\n", set.size);
        rc = 1;
    }
    if (!rc && (!make_dir(out) || !write_subset(train, &set, out, "train", set.train, set.seed) ||
                !write_subset(test, &set, out, "test", set.test, set.seed ^ 0x7E57ull)))
        rc = 1;
    char path[4300];
    snprintf(path, sizeof path, "%s/classes.txt", out);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f) {
        fprintf(stderr, "clgrad-make-segmentation: cannot write %s: %s\n", path, strerror(errno));
        rc = 1;
    }
    if (f) {
        fprintf(f, "# class value (the gray value of the label images)\nbackground 0\n");
        for (size_t k = 0; k < K; k++)
            fprintf(f, "%s %zu\n", K == 10 && strstr(in, "fashion") ? fashion_names[k]
                                                                    : clg_datastore_class_name(train, k),
                    k + 1);
        rc = fclose(f) == 0 ? 0 : 1;
    }
    if (!rc)
        printf("wrote %zu training and %zu test scenes of %zux%zu (%zu classes and background) "
               "under %s\n", set.train, set.test, set.size, set.size, K, out);
    clg_datastore_destroy(train);
    clg_datastore_destroy(test);
    return rc;
}
