/* A view whose labels follow another list of class names (a model's), matched by name. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "data/data_internal.h"

typedef struct relabel_store {
    clg_datastore *parent; /* borrowed */
    size_t classes;        /* the parent's */
    int32_t map[];         /* the parent's label -> position among the names */
} relabel_store;

/* Every label of the sample (one, or one per pixel) mapped; ignored pixels stay ignored. */
static clg_status relabel_read(clg_datastore *ds, size_t index, float *image, void *target)
{
    relabel_store *s = ds->impl;
    int32_t *label = target;
    clg_status st = clg_datastore_read(s->parent, &index, 1, image, label);
    if (st != CLG_OK)
        return clg__datastore_fail(ds, st, "%s", clg_datastore_last_error(s->parent));
    size_t n = clg_shape_numel(ds->target_shape);
    for (size_t i = 0; i < n; i++) {
        int32_t l = label[i];
        if (ds->target == CLG_TARGET_PIXELS && l == CLG_LABEL_IGNORE)
            continue;
        if (l < 0 || (size_t)l >= s->classes)
            return clg__datastore_fail(ds, CLG_ERR_CORRUPT, "sample %zu: label %d is outside "
                                       "the data's %zu classes", index, l, s->classes);
        label[i] = s->map[l];
    }
    return CLG_OK;
}

static clg_datastore *relabel_inner(void *impl)
{
    return ((relabel_store *)impl)->parent;
}

static const clg__datastore_ops relabel_ops = {
    .read = relabel_read, .destroy = free, .inner = relabel_inner};

/* Whether name is class i's default, its number (an IDX set's, an unnamed model's). */
static int is_number(const char *name, size_t i)
{
    char number[32];
    snprintf(number, sizeof number, "%zu", i);
    return name && !strcmp(name, number);
}

/* Whether names are the default numbering "0", "1", .... */
static int numbered(const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!is_number(names[i], i))
            return 0;
    return 1;
}

int clg_class_names_equal(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    for (;;) {
        while (*a && !isalnum((unsigned char)*a))
            a++;
        while (*b && !isalnum((unsigned char)*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (tolower((unsigned char)*a++) != tolower((unsigned char)*b++))
            return 0;
    }
}

/* "a, b, c" into out (cut short with "..." when it does not fit). */
static void list_names(const char *const *names, size_t count, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < count && len < cap; i++) {
        int k = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", names[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    if (len >= cap && cap > 4)
        strcpy(out + cap - 4, "...");
}

static clg_status mismatch(clg_datastore *parent, const char *const *have, size_t nhave,
                           const char *const *want, size_t nwant, const char *why)
{
    char a[1024], b[1024];
    list_names(have, nhave, a, sizeof a);
    list_names(want, nwant, b, sizeof b);
    return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "the data's classes do not match the "
                               "model's: %s; the data's: %s; the model's: %s", why, a, b);
}

clg_status clg_datastore_match_classes(clg_datastore *parent, const char *const *names,
                                       size_t count, clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!parent || !out || !count || !names)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_match_classes: "
                                   "parent, names and out must not be NULL, count >= 1");
    if (parent->target == CLG_TARGET_VALUES)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_match_classes: "
                                   "the data's targets are values, not classes");
    size_t k = clg_datastore_class_count(parent);
    const char **have = clg__calloc(k, sizeof *have);
    relabel_store *s = clg__calloc(1, sizeof *s + k * sizeof s->map[0]);
    if (!have || !s) {
        free(have);
        free(s);
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_match_classes: out of host memory");
    }
    for (size_t i = 0; i < k; i++)
        have[i] = clg_datastore_class_name(parent, i);
    clg_status st = CLG_OK;
    char why[512];
    int by_name = !numbered(have, k) && !numbered(names, count);
    if (!by_name && k > count) {
        snprintf(why, sizeof why, "%zu classes against %zu (and no names to match them by)", k,
                 count);
        st = mismatch(parent, have, k, names, count, why);
    }
    for (size_t i = 0; st == CLG_OK && i < k; i++) {
        size_t j = 0;
        while (by_name && j < count && !clg_class_names_equal(have[i], names[j]))
            j++;
        j = by_name ? j : i; /* nothing to match: labels as they are */
        for (size_t p = 0; by_name && j < count && p < i; p++)
            if (s->map[p] == (int32_t)j) {
                snprintf(why, sizeof why, "\"%s\" and \"%s\" are both \"%s\"", have[p], have[i],
                         names[j]);
                st = mismatch(parent, have, k, names, count, why);
            }
        if (st == CLG_OK && j == count) {
            snprintf(why, sizeof why, "\"%s\" is not among the model's", have[i]);
            st = mismatch(parent, have, k, names, count, why);
        }
        s->map[i] = (int32_t)j;
    }
    free(have);
    if (st != CLG_OK) {
        free(s);
        return st;
    }
    s->parent = parent;
    s->classes = k;
    st = clg__datastore_new(&relabel_ops, s, clg_datastore_size(parent),
                            clg_datastore_sample_shape(parent), count, out);
    if (st == CLG_OK)
        clg__datastore_set_target(*out, parent->target, parent->target_shape);
    if (st == CLG_OK && (st = clg_datastore_set_class_names(*out, names, count)) != CLG_OK) {
        clg_datastore_destroy(*out);
        *out = NULL;
    }
    return st;
}

int clg__datastore_classes_in_order(const clg_datastore *ds, const char *const *names,
                                    size_t count)
{
    size_t k = clg_datastore_class_count(ds);
    int ds_numbered = 1;
    for (size_t i = 0; i < k; i++)
        ds_numbered &= is_number(clg_datastore_class_name(ds, i), i);
    if (ds_numbered || numbered(names, count))
        return 1;
    for (size_t i = 0; i < k; i++)
        if (i >= count || !clg_class_names_equal(clg_datastore_class_name(ds, i), names[i]))
            return 0;
    return 1;
}
