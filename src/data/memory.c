/* A datastore over arrays the caller already holds (copied once), like MATLAB's
 * arrayDatastore: for synthetic data, benchmarks and tests; with class labels, label maps or
 * float targets. */
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "data/data_internal.h"

typedef struct memory_store {
    float *images;
    unsigned char *targets; /* 4 bytes a value */
    size_t per, target_bytes;
} memory_store;

static void memory_destroy(void *impl)
{
    memory_store *m = impl;
    if (!m)
        return;
    free(m->images);
    free(m->targets);
    free(m);
}

static clg_status memory_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    const memory_store *m = ds->impl;
    if (image)
        memcpy(image, m->images + index * m->per, m->per * sizeof *image);
    memcpy(target, m->targets + index * m->target_bytes, m->target_bytes);
    return CLG_OK;
}

static const clg__datastore_ops memory_ops = {.read = memory_read, .destroy = memory_destroy};

/* The first label outside [0, classes) (pixels may also be ignored), or -1 when none. */
static long long bad_label(const int32_t *labels, size_t n, size_t classes, int pixels)
{
    for (size_t i = 0; i < n; i++)
        if ((labels[i] < 0 || (size_t)labels[i] >= classes) &&
            !(pixels && labels[i] == CLG_LABEL_IGNORE))
            return (long long)i;
    return -1;
}

clg_status clg_datastore_from_memory_targets(const float *images, const void *targets, size_t n,
                                             clg_shape sample, clg_target_kind kind,
                                             clg_shape target_shape, size_t classes,
                                             clg_datastore **out)
{
    const char *call = "clg_datastore_from_memory";
    if (out)
        *out = NULL;
    sample.n = 1, target_shape.n = 1;
    size_t per = clg_shape_numel(sample), tper = clg_shape_numel(target_shape);
    int labelled = kind != CLG_TARGET_VALUES;
    if (!images || !targets || !out || !n || !per || !tper || (unsigned)kind > CLG_TARGET_VALUES ||
        (labelled && classes < 2) || (kind == CLG_TARGET_CLASS && tper != 1))
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: images, targets and out must "
                                   "not be NULL, n and the sizes > 0, classes >= 2 for labels (one "
                                   "per sample for classes)", call);
    if (kind == CLG_TARGET_PIXELS && (target_shape.c != 1 || target_shape.h != sample.h ||
                                      target_shape.w != sample.w))
        return clg__datastore_fail(NULL, CLG_ERR_SHAPE, "%s: label maps are 1 x %zu x %zu (the "
                                   "images' size), not %zu x %zu x %zu", call, sample.h, sample.w,
                                   target_shape.c, target_shape.h, target_shape.w);
    if (per > (size_t)-1 / sizeof(float) / n || tper > (size_t)-1 / 4 / n)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: %zu samples of %zu values "
                                   "overflow", call, n, per);
    long long bad = labelled ? bad_label(targets, n * tper, classes, kind == CLG_TARGET_PIXELS)
                             : -1;
    if (bad >= 0)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s: label %d of sample %zu is "
                                   "outside [0, %zu)", call, ((const int32_t *)targets)[bad],
                                   (size_t)bad / tper, classes);
    memory_store *m = clg__calloc(1, sizeof *m);
    if (m) {
        m->per = per;
        m->target_bytes = 4 * tper;
        m->images = clg__malloc(n * per * sizeof *m->images);
        m->targets = clg__malloc(n * m->target_bytes);
    }
    if (!m || !m->images || !m->targets) {
        memory_destroy(m);
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory",
                                   call);
    }
    memcpy(m->images, images, n * per * sizeof *images);
    memcpy(m->targets, targets, n * m->target_bytes);
    clg_status st = clg__datastore_new(&memory_ops, m, n, sample, labelled ? classes : 0, out);
    if (st == CLG_OK)
        clg__datastore_set_target(*out, kind, target_shape);
    return st;
}

clg_status clg_datastore_from_memory(const float *images, const int32_t *labels, size_t n,
                                     clg_shape sample, size_t classes, clg_datastore **out)
{
    return clg_datastore_from_memory_targets(images, labels, n, sample, CLG_TARGET_CLASS,
                                             (clg_shape){1, 1, 1, 1}, classes, out);
}
