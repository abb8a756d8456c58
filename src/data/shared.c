/* A store shared by several trainings reading the same samples at once: each sample read from
 * the parent is kept until `consumers` reads of it were served, then freed; a second reader of
 * a sample being read waits for it instead of reading it again. Kept memory is capped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

typedef struct kept {
    float *image;     /* NULL while being read; its target after the pixels */
    unsigned left;    /* reads still to serve */
} kept;

typedef struct shared_store {
    clg_datastore *parent;  /* borrowed */
    unsigned consumers;
    size_t per, cap_bytes, used_bytes;
    kept **slot;            /* one per sample of the parent */
    pthread_mutex_t lock;
    pthread_cond_t done;    /* a read in progress ended */
} shared_store;

static clg_status shared_read(clg_datastore *ds, size_t index, float *image, void *label)
{
    shared_store *s = ds->impl;
    size_t tb = clg__target_bytes(ds);
    if (!image) {
        clg_status st = clg_datastore_read(s->parent, &index, 1, NULL, label);
        return st == CLG_OK ? st : clg__datastore_fail(ds, st, "%s", clg_last_error());
    }
    pthread_mutex_lock(&s->lock);
    while (s->slot[index] && !s->slot[index]->image) /* another reader is reading it */
        pthread_cond_wait(&s->done, &s->lock);
    kept *k = s->slot[index];
    if (k) { /* served from memory */
        memcpy(image, k->image, s->per * sizeof *image);
        memcpy(label, k->image + s->per, tb);
        if (--k->left == 0) {
            s->slot[index] = NULL;
            s->used_bytes -= s->per * sizeof *image + tb;
            free(k->image);
            free(k);
        }
        pthread_mutex_unlock(&s->lock);
        return CLG_OK;
    }
    size_t bytes = s->per * sizeof *image + tb;
    int keep = s->consumers > 1 && s->used_bytes + bytes <= s->cap_bytes;
    kept *mine = keep ? clg__calloc(1, sizeof *mine) : NULL;
    if (mine)
        s->slot[index] = mine; /* marks it as being read */
    pthread_mutex_unlock(&s->lock);
    clg_status st = clg_datastore_read(s->parent, &index, 1, image, label);
    if (!mine)
        return st == CLG_OK ? st : clg__datastore_fail(ds, st, "%s", clg_last_error());
    float *copy = st == CLG_OK ? clg__malloc(bytes) : NULL;
    if (copy) {
        memcpy(copy, image, s->per * sizeof *image);
        memcpy(copy + s->per, label, tb);
    }
    pthread_mutex_lock(&s->lock);
    if (copy) {
        mine->image = copy;
        mine->left = s->consumers - 1;
        s->used_bytes += bytes;
    } else { /* failed or no memory: the next reader reads it itself */
        s->slot[index] = NULL;
        free(mine);
    }
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->lock);
    return st == CLG_OK ? st : clg__datastore_fail(ds, st, "%s", clg_last_error());
}

static void shared_destroy(void *impl)
{
    shared_store *s = impl;
    if (!s)
        return;
    for (size_t i = 0; s->slot && i < clg_datastore_size(s->parent); i++)
        if (s->slot[i]) {
            free(s->slot[i]->image);
            free(s->slot[i]);
        }
    free(s->slot);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static clg_datastore *shared_inner(void *impl)
{
    return ((shared_store *)impl)->parent;
}

static const clg__datastore_ops shared_ops = {
    .read = shared_read, .destroy = shared_destroy, .inner = shared_inner};

clg_status clg_datastore_shared(clg_datastore *parent, unsigned consumers, size_t cap_bytes,
                                clg_datastore **out)
{
    if (out)
        *out = NULL;
    if (!parent || !out || !consumers)
        return clg__datastore_fail(parent, CLG_ERR_INVALID_ARG, "clg_datastore_shared: parent "
                                   "and out must not be NULL, consumers >= 1");
    size_t n = clg_datastore_size(parent);
    shared_store *s = clg__calloc(1, sizeof *s);
    if (s)
        s->slot = clg__calloc(n ? n : 1, sizeof *s->slot);
    if (!s || !s->slot || pthread_mutex_init(&s->lock, NULL) != 0) {
        if (s)
            free(s->slot);
        free(s);
        return clg__datastore_fail(parent, CLG_ERR_OUT_OF_HOST_MEMORY,
                                   "clg_datastore_shared: out of host memory");
    }
    pthread_cond_init(&s->done, NULL);
    s->parent = parent;
    s->consumers = consumers;
    s->per = clg_shape_numel(clg_datastore_sample_shape(parent));
    s->cap_bytes = cap_bytes ? cap_bytes : (size_t)256 << 20;
    clg_status st = clg__datastore_new(&shared_ops, s, n, clg_datastore_sample_shape(parent),
                                       clg_datastore_class_count(parent), out);
    if (st != CLG_OK)
        return st;
    clg__datastore_set_target(*out, parent->target, parent->target_shape);
    st = clg__datastore_copy_names(*out, parent);
    if (st != CLG_OK) {
        clg_datastore_destroy(*out);
        *out = NULL;
    }
    return st;
}
