/* A datastore over the caller's own data source: a sample count, a shape, and a callback that
 * reads sample i. Usable wherever a built-in store is (views, augmentation, the batch reader's
 * worker threads, device groups, MPI partitions, experiments). */
#include <stdio.h>
#include <stdlib.h>

#include "data/data_internal.h"

typedef struct callback_store {
    clg_datastore_callbacks cb;
} callback_store;

static void callback_destroy(void *impl)
{
    callback_store *s = impl;
    if (s && s->cb.close)
        s->cb.close(s->cb.user);
    free(s);
}

static clg_status callback_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    int32_t *label = target;
    const callback_store *s = ds->impl;
    char why[256] = "";
    int32_t l = -1;
    if (s->cb.read(s->cb.user, index, image, &l, why, sizeof why) != 0) {
        why[sizeof why - 1] = '\0';
        return clg__datastore_fail(ds, CLG_ERR_IO, "datastore callback: sample %zu: %s", index,
                                   why[0] ? why : "the callback failed");
    }
    if (l < 0 || (size_t)l >= ds->classes)
        return clg__datastore_fail(ds, CLG_ERR_CORRUPT, "datastore callback: sample %zu has "
                                   "label %d, outside [0, %zu)", index, l, ds->classes);
    *label = l;
    return CLG_OK;
}

static const clg__datastore_ops callback_ops = {.read = callback_read, .destroy = callback_destroy};

clg_datastore_callbacks clg_datastore_callbacks_default(void)
{
    clg_datastore_callbacks cb = {0};
    cb.struct_size = sizeof cb;
    return cb;
}

clg_status clg_datastore_from_callbacks(const clg_datastore_callbacks *cb, clg_datastore **out)
{
    if (out)
        *out = NULL;
    clg_datastore_callbacks c = clg_datastore_callbacks_default();
    if (!cb || !out)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_from_callbacks: "
                                   "callbacks and out must not be NULL");
    if (clg__options_read(&c, cb, sizeof c, "clg_datastore_from_callbacks") != CLG_OK)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "%s", clg_last_error());
    c.sample.n = 1;
    if (!c.read || !c.count || !clg_shape_numel(c.sample) || c.classes < 2)
        return clg__datastore_fail(NULL, CLG_ERR_INVALID_ARG, "clg_datastore_from_callbacks: "
                                   "read must be set, count and the sample size > 0, classes >= 2");
    callback_store *s = clg__calloc(1, sizeof *s);
    if (!s)
        return clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_from_callbacks: out of host memory");
    s->cb = c;
    clg_status st = clg__datastore_new(&callback_ops, s, c.count, c.sample, c.classes, out);
    if (st != CLG_OK) {
        s->cb.close = NULL; /* the caller still owns the source when nothing was made */
        callback_destroy(s);
    }
    return st;
}
