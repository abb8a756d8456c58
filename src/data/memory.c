/* A datastore over arrays the caller already holds (copied once), like MATLAB's
 * arrayDatastore: for synthetic data, benchmarks and tests. */
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

typedef struct memory_store {
    float *images;
    int32_t *labels;
    size_t per;
} memory_store;

static void memory_destroy(void *impl)
{
    memory_store *m = impl;
    if (!m)
        return;
    free(m->images);
    free(m->labels);
    free(m);
}

static clg_status memory_read(clg_datastore *ds, size_t index, float *image, int32_t *label)
{
    const memory_store *m = ds->impl;
    if (image)
        memcpy(image, m->images + index * m->per, m->per * sizeof *image);
    *label = m->labels[index];
    return CLG_OK;
}

static const clg__datastore_ops memory_ops = {.read = memory_read, .destroy = memory_destroy};

clg_status clg_datastore_from_memory(const float *images, const int32_t *labels, size_t n,
                                     clg_shape sample, size_t classes, clg_datastore **out)
{
    if (out)
        *out = NULL;
    sample.n = 1;
    size_t per = clg_shape_numel(sample);
    if (!images || !labels || !out || !n || !per || classes < 2)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_from_memory: images, "
                                   "labels and out must not be NULL, n and the sample size > 0, "
                                   "classes >= 2");
    for (size_t i = 0; i < n; i++)
        if (labels[i] < 0 || (size_t)labels[i] >= classes)
            return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_from_memory: "
                                       "label %d of sample %zu is outside [0, %zu)", labels[i], i,
                                       classes);
    if (per > (size_t)-1 / sizeof(float) / n)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_from_memory: %zu "
                                   "samples of %zu values overflow", n, per);
    memory_store *m = clg__calloc(1, sizeof *m);
    if (m) {
        m->per = per;
        m->images = clg__malloc(n * per * sizeof *m->images);
        m->labels = clg__malloc(n * sizeof *m->labels);
    }
    if (!m || !m->images || !m->labels) {
        memory_destroy(m);
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_from_memory: out of host memory");
    }
    memcpy(m->images, images, n * per * sizeof *images);
    memcpy(m->labels, labels, n * sizeof *labels);
    return clg__datastore_new(&memory_ops, m, n, sample, classes, out);
}
