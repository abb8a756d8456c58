/* clgrad-export-images: writes an IDX data set as an image-folder tree of PNGs, one folder
 * per class (OUT_DIR/<class>/<index>.png), so the image-folder path can be tried on it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clgrad/clgrad.h"
#include "opts.h"
#include "png_out.h"
#include "tool_error.h"


static const char *const fashion_names[10] = {"T-shirt_top", "Trouser", "Pullover", "Dress",
                                              "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                                              "Ankle_boot"};

typedef struct settings {
    size_t limit;
    int names;
} settings;

static const opt_def defs[] = {
    {OPT_SIZE, "limit", offsetof(settings, limit), 1, UNBOUNDED, .value = "N",
     .help = "only the first N samples"},
    {OPT_FLAG, "fashion-names", offsetof(settings, names), 0, 0,
     .help = "class folders named as Fashion-MNIST's classes (10 labels)"},
};

static const opt_tool tool = {
    "clgrad-export-images", NULL,
    "usage: clgrad-export-images [options] IDX_IMAGES IDX_LABELS OUT_DIR\n"
    "Writes every sample (or the first N) as OUT_DIR/<class>/<index>.png; class folders\n"
    "are the label numbers, or Fashion-MNIST's names with --fashion-names.\n",
    "  -h, --help, --version\n", defs, sizeof defs / sizeof defs[0], 3, 3,
    "IDX_IMAGES IDX_LABELS OUT_DIR"};

int main(int argc, char **argv)
{
    settings set = {(size_t)-1, 0};
    size_t nops = 0;
    int parsed = opts_parse(&tool, argc, argv, &set, &nops);
    if (parsed)
        return parsed < 0 ? 0 : parsed;
    const char *images = argv[1], *labels = argv[2], *out = argv[3];
    size_t limit = set.limit;
    int names = set.names;
    clg_datastore *ds;
    clg_status st = clg_datastore_open_idx(images, labels, &ds);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-export-images: %s\n", tool_message(st, clg_last_error()));
        return 1;
    }
    clg_shape s = clg_datastore_sample_shape(ds);
    size_t n = clg_datastore_size(ds), per = clg_shape_numel(s), classes = clg_datastore_class_count(ds);
    if (names && classes != 10) {
        fprintf(stderr, "clgrad-export-images: --fashion-names needs 10 classes, the labels have %zu\n",
                classes);
        clg_datastore_destroy(ds);
        return 1;
    }
    if (s.c != 1 && s.c != 3) {
        fprintf(stderr, "clgrad-export-images: %zu channels cannot be a PNG\n", s.c);
        clg_datastore_destroy(ds);
        return 1;
    }
    n = n < limit ? n : limit;
    float *x = malloc(per * sizeof *x);
    char path[4096];
    int rc = x ? 0 : 1;
    if (rc == 0 && !make_dir(out)) {
        fprintf(stderr, "clgrad-export-images: cannot create %s: %s\n", out, strerror(errno));
        rc = 1;
    }
    for (size_t c = 0; rc == 0 && c < classes; c++) {
        snprintf(path, sizeof path, "%s/%s", out, names ? fashion_names[c] : clg_datastore_class_name(ds, c));
        rc = make_dir(path) ? 0 : 1;
        if (rc)
            fprintf(stderr, "clgrad-export-images: cannot create %s: %s\n", path, strerror(errno));
    }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        int32_t label;
        st = clg_datastore_read(ds, &k, 1, x, &label);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-export-images: %s\n", clg_datastore_last_error(ds));
            rc = 1;
            break;
        }
        snprintf(path, sizeof path, "%s/%s/%06zu.png", out,
                 names ? fashion_names[label] : clg_datastore_class_name(ds, (size_t)label), k);
        if (!write_png_planar(path, x, s.c, s.h, s.w)) {
            fprintf(stderr, "clgrad-export-images: cannot write %s\n", path);
            rc = 1;
        }
    }
    if (rc == 0)
        printf("wrote %zu images in %zu class folders under %s\n", n, classes, out);
    else if (!x)
        fprintf(stderr, "clgrad-export-images: out of memory\n");
    free(x);
    clg_datastore_destroy(ds);
    return rc;
}
