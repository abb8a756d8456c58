/* What every datastore shares: accessors, class names, subsets, checked reads. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

/* Failures are rare and short: a spin lock keeps two failing reader threads from writing the
 * text at once without giving every kind of store a mutex to set up. */
static void set_error(clg_datastore *ds, const char *text)
{
    while (atomic_exchange(&ds->error_lock, 1))
        sched_yield();
    snprintf(ds->last_error, sizeof ds->last_error, "%s", text);
    atomic_store(&ds->error_lock, 0);
}

clg_status clg__datastore_fail(clg_datastore *ds, clg_status status, const char *fmt, ...)
{
    char text[CLG__ERR_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (ds)
        set_error(ds, text);
    return clg__fail(NULL, status, "%s", text);
}

static void free_names(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static char **copy_names(const char *const *names, size_t n)
{
    char **out = clg__calloc(n ? n : 1, sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char number[32];
        if (!names)
            snprintf(number, sizeof number, "%zu", i);
        out[i] = clg__strdup(names ? names[i] : number);
        if (!out[i]) {
            free_names(out, n);
            return NULL;
        }
    }
    return out;
}

clg_status clg__datastore_new(const clg__datastore_ops *ops, void *impl, size_t size,
                              clg_shape sample, size_t classes, clg_datastore **out)
{
    clg_datastore *ds = clg__calloc(1, sizeof *ds);
    char **names = copy_names(NULL, classes);
    if (!ds || !names) {
        free(ds);
        free_names(names, classes);
        ops->destroy(impl);
        return clg__oom(NULL, "datastore");
    }
    ds->ops = ops;
    ds->impl = impl;
    ds->size = size;
    ds->sample = sample;
    ds->classes = classes;
    ds->class_names = names;
    ds->target = CLG_TARGET_CLASS;
    ds->target_shape = (clg_shape){1, 1, 1, 1};
    *out = ds;
    return CLG_OK;
}

void clg__datastore_set_target(clg_datastore *ds, clg_target_kind kind, clg_shape shape)
{
    shape.n = 1;
    ds->target = kind;
    ds->target_shape = shape;
}

size_t clg__target_bytes(const clg_datastore *ds)
{
    return 4 * clg_shape_numel(ds->target_shape);
}

clg_target_kind clg_datastore_target(const clg_datastore *ds, clg_shape *shape)
{
    if (shape)
        *shape = ds ? ds->target_shape : (clg_shape){0, 0, 0, 0};
    return ds ? ds->target : CLG_TARGET_CLASS;
}

void clg_datastore_destroy(clg_datastore *ds)
{
    if (!ds)
        return;
    if (ds->ops && ds->impl)
        ds->ops->destroy(ds->impl);
    free_names(ds->class_names, ds->classes);
    free(ds->map);
    free(ds);
}

clg_status clg_datastore_subset(clg_datastore *parent, size_t first, size_t count,
                                clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!parent || !out)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_subset: parent and out must not be NULL");
    if (first > parent->size || count > parent->size - first)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_subset: samples [%zu, %zu) are outside the "
                                   "%zu samples of the parent", first, first + count,
                                   parent->size);
    clg_datastore *ds = clg__calloc(1, sizeof *ds);
    char **names = copy_names((const char *const *)parent->class_names, parent->classes);
    if (!ds || !names) {
        free(ds);
        free_names(names, parent->classes);
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_subset: out of host memory");
    }
    ds->parent = parent;
    ds->first = first;
    ds->size = count;
    ds->sample = parent->sample;
    ds->classes = parent->classes;
    ds->class_names = names;
    ds->target = parent->target;
    ds->target_shape = parent->target_shape;
    *out = ds;
    return CLG_OK;
}

clg_status clg_datastore_select(clg_datastore *parent, const size_t *indices, size_t count,
                                clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!parent || !out || (count && !indices))
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_select: parent, indices and out must not be NULL");
    for (size_t i = 0; i < count; i++)
        if (indices[i] >= parent->size)
            return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_select: index "
                                       "%zu (position %zu) is outside the %zu samples", indices[i],
                                       i, parent->size);
    size_t *map = clg__malloc((count ? count : 1) * sizeof *map);
    clg_status st = map ? clg_datastore_subset(parent, 0, 0, out)
                        : clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY,
                                              "clg_datastore_select: out of host memory");
    if (st != CLG_OK) {
        free(map);
        return st;
    }
    if (count)
        memcpy(map, indices, count * sizeof *map);
    (*out)->map = map;
    (*out)->size = count;
    return CLG_OK;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* 0..n-1 in an order that depends on seed only (Fisher-Yates); NULL when out of memory. */
static size_t *seeded_permutation(size_t n, uint64_t seed)
{
    size_t *perm = clg__malloc((n ? n : 1) * sizeof *perm);
    if (!perm)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t s = seed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(splitmix64(&s) % i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    return perm;
}

clg_status clg_datastore_split(clg_datastore *parent, double fraction, uint64_t seed,
                               clg_datastore **first, clg_datastore **second)
{
    if (first)
        *first = NULL;
    if (second)
        *second = NULL;
    if (!parent || !first || !second || !(fraction >= 0.0 && fraction <= 1.0))
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_split: parent and "
                                   "outputs must not be NULL, fraction in [0, 1]");
    size_t n = parent->size, k = (size_t)(fraction * (double)n + 0.5);
    size_t *perm = seeded_permutation(n, seed);
    if (!perm)
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_split: out of host memory");
    clg_status st = clg_datastore_select(parent, perm, k, first);
    if (st == CLG_OK)
        st = clg_datastore_select(parent, perm + k, n - k, second);
    free(perm);
    if (st != CLG_OK) {
        clg_datastore_destroy(*first);
        *first = NULL;
    }
    return st;
}

clg_status clg_datastore_shuffle(clg_datastore *parent, uint64_t seed, clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!parent || !out)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_shuffle: parent and out must not be NULL");
    size_t *perm = seeded_permutation(parent->size, seed);
    if (!perm)
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_shuffle: out of host memory");
    clg_status st = clg_datastore_select(parent, perm, parent->size, out);
    free(perm);
    return st;
}

clg_status clg_datastore_partition(clg_datastore *parent, size_t parts, size_t index,
                                   clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!parent || !out || !parts || index >= parts)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_partition: parent "
                                   "and out must not be NULL, index < parts");
    /* block i is [floor(i n / parts), floor((i + 1) n / parts)): sizes differ by at most 1 */
    size_t n = parent->size;
    size_t lo = (size_t)((unsigned __int128)n * index / parts);
    size_t hi = (size_t)((unsigned __int128)n * (index + 1) / parts);
    return clg_datastore_subset(parent, lo, hi - lo, out);
}

size_t clg_datastore_size(const clg_datastore *ds)
{
    return ds ? ds->size : 0;
}

clg_shape clg_datastore_sample_shape(const clg_datastore *ds)
{
    clg_shape none = {0, 0, 0, 0};
    return ds ? ds->sample : none;
}

size_t clg_datastore_class_count(const clg_datastore *ds)
{
    return ds ? ds->classes : 0;
}

const char *clg_datastore_class_name(const clg_datastore *ds, size_t i)
{
    return ds && i < ds->classes ? ds->class_names[i] : NULL;
}

clg_status clg_datastore_set_class_names(clg_datastore *ds, const char *const *names,
                                         size_t count)
{
    if (!ds || !names)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_set_class_names: ds and names must not be NULL");
    if (count != ds->classes)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_set_class_names: %zu names given for %zu classes",
                                   count, ds->classes);
    for (size_t i = 0; i < count; i++)
        if (!names[i] || !names[i][0])
            return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG,
                                       "clg_datastore_set_class_names: name %zu is empty", i);
    char **copy = copy_names(names, count);
    if (!copy)
        return clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_set_class_names: out of host memory");
    free_names(ds->class_names, ds->classes);
    ds->class_names = copy;
    return CLG_OK;
}

/* The store holding ds's sample index and its index there. */
static clg_datastore *root_of(clg_datastore *ds, size_t *index)
{
    while (ds->parent) {
        *index = ds->map ? ds->map[*index] : *index + ds->first;
        ds = ds->parent;
    }
    return ds;
}

clg_status clg__datastore_read_with(clg_datastore *ds, size_t index, clg__geometry_fn pick,
                                    void *user, size_t h, size_t w, float *image, void *target)
{
    if (index >= ds->size)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG, "clg_datastore_read: index %zu is "
                                   "outside the %zu samples", index, ds->size);
    clg_datastore *src = root_of(ds, &index);
    if (!src->ops->read_with)
        return CLG_ERR_UNSUPPORTED;
    clg_status st = src->ops->read_with(src, index, pick, user, h, w, image, target);
    if (st == CLG_OK)
        atomic_fetch_add(&src->decoded, 1);
    else if (src != ds)
        set_error(ds, clg_last_error());
    return st;
}

clg_status clg_datastore_read(clg_datastore *ds, const size_t *indices, size_t n, float *images,
                              void *targets)
{
    /* a target is a class label or per-pixel labels or values: 4 bytes each */
    unsigned char scratch[64], *own = NULL, *tg = targets;
    if (!ds || (n && !indices))
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG,
                                   "clg_datastore_read: ds and indices must not be NULL");
    size_t per = clg_shape_numel(ds->sample), tb = clg__target_bytes(ds);
    if (!tg && tb > sizeof scratch && !(own = clg__malloc(tb)))
        return clg__datastore_fail(ds, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_read: out of host memory");
    for (size_t i = 0; i < n; i++) {
        if (indices[i] >= ds->size) {
            free(own);
            return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG,
                                       "clg_datastore_read: index %zu (position %zu) is outside "
                                       "the %zu samples", indices[i], i, ds->size);
        }
        size_t index = indices[i];
        clg_datastore *src = root_of(ds, &index);
        float *image = images ? images + i * per : NULL;
        void *target = tg ? tg + i * tb : own ? (void *)own : (void *)scratch;
        clg_status st = src->ops->read(src, index, image, target);
        if (st == CLG_OK && image)
            atomic_fetch_add(&src->decoded, 1);
        if (st != CLG_OK) {
            if (src != ds)
                set_error(ds, clg_last_error());
            free(own);
            return st;
        }
    }
    free(own);
    return CLG_OK;
}

clg_status clg__datastore_copy_names(clg_datastore *to, const clg_datastore *from)
{
    size_t k = clg_datastore_class_count(from);
    const char **names = clg__calloc(k ? k : 1, sizeof *names);
    for (size_t i = 0; names && i < k; i++)
        names[i] = clg_datastore_class_name(from, i);
    clg_status st = names ? clg_datastore_set_class_names(to, names, k)
                          : clg__datastore_fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY,
                                                "datastore: out of host memory");
    free(names);
    return st;
}

clg_datastore *clg__datastore_below(const clg_datastore *ds)
{
    if (!ds)
        return NULL;
    if (ds->parent)
        return ds->parent;
    return ds->ops && ds->ops->inner ? ds->ops->inner(ds->impl) : NULL;
}

uint64_t clg_datastore_decoded(const clg_datastore *ds)
{
    while (ds && ds->parent)
        ds = ds->parent;
    return ds ? atomic_load(&((clg_datastore *)ds)->decoded) : 0;
}

size_t clg_datastore_skipped(clg_datastore *ds, int reset)
{
    while (ds && !(ds->ops && ds->ops->skipped)) /* through subsets and views to the files */
        ds = clg__datastore_below(ds);
    return ds && ds->ops && ds->ops->skipped ? ds->ops->skipped(ds->impl, reset) : 0;
}

const char *clg_datastore_skipped_file(clg_datastore *ds, size_t i)
{
    while (ds && !(ds->ops && ds->ops->skipped))
        ds = clg__datastore_below(ds);
    return ds && ds->ops->bad_file ? ds->ops->bad_file(ds->impl, i) : NULL;
}

const char *clg_datastore_last_error(const clg_datastore *ds)
{
    return ds ? ds->last_error : "";
}
