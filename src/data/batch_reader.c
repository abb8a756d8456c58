/* Mini-batches read ahead by worker threads into a ring of `depth` slots. Workers claim batches
 * in order and batch b always goes to slot b % depth, so the caller takes them in order and
 * the sequence does not depend on the worker count or on timing; a worker claims batch b only
 * once batch b - depth has been taken, which bounds memory to the ring. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/data_internal.h"

#define MAX_WORKERS 64
#define MAX_DEPTH 1024

enum { SLOT_FREE, SLOT_READING, SLOT_READY };

typedef struct slot {
    float *images;
    void *targets;
    size_t batch_index;
    int state;
    clg_status st;
    char msg[CLG__ERR_TEXT];
} slot;

struct clg_batch_reader {
    clg_datastore *ds;
    size_t batch, per, target_bytes, workers, depth;
    pthread_t threads[MAX_WORKERS];
    size_t started;
    pthread_mutex_t lock;
    pthread_cond_t work;   /* a batch may be claimed, or quit */
    pthread_cond_t ready;  /* a read ended */
    slot *slots;
    size_t *order, order_cap;
    /* this pass, under lock: batches in all, claimed by workers, taken by the caller */
    size_t batches, claimed, taken;
    size_t reading;        /* reads in progress */
    int failed;            /* a read of this pass failed: nothing more is claimed */
    int quit;
    atomic_uint_fast64_t samples;
    char last_error[CLG__ERR_TEXT];
};

static clg_status read_batch(clg_batch_reader *r, const size_t *indices, float *images,
                             void *targets, char *msg, size_t cap)
{
    clg_status st = clg_datastore_read(r->ds, indices, r->batch, images, targets);
    if (st != CLG_OK)
        snprintf(msg, cap, "%s", clg_last_error());
    else
        atomic_fetch_add(&r->samples, r->batch);
    return st;
}

static int can_claim(const clg_batch_reader *r)
{
    return !r->failed && r->claimed < r->batches && r->claimed < r->taken + r->depth;
}

static void *work(void *arg)
{
    clg_batch_reader *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->quit && !can_claim(r))
            pthread_cond_wait(&r->work, &r->lock);
        if (r->quit)
            break;
        size_t b = r->claimed++;
        slot *s = &r->slots[b % r->depth];
        s->state = SLOT_READING;
        s->batch_index = b;
        r->reading++;
        const size_t *indices = r->order + b * r->batch;
        pthread_mutex_unlock(&r->lock);
        char msg[CLG__ERR_TEXT] = "";
        clg_status st = read_batch(r, indices, s->images, s->targets, msg, sizeof msg);
        pthread_mutex_lock(&r->lock);
        s->st = st;
        memcpy(s->msg, msg, sizeof msg);
        s->state = SLOT_READY;
        r->failed |= st != CLG_OK;
        r->reading--;
        pthread_cond_broadcast(&r->ready);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static clg_status fail(clg_batch_reader *r, clg_status st, const char *text)
{
    if (r)
        snprintf(r->last_error, sizeof r->last_error, "%s", text);
    return clg__fail(NULL, st, "%s", text);
}

/* pthread_create's EAGAIN is often passing (a machine's thread or process limit while other
 * programs start theirs): a few tries, 1 to 128 ms apart, before a reader fails. */
static int start_worker(clg_batch_reader *r, const pthread_attr_t *attr)
{
    int err = 0;
    for (int t = 0; t < 8; t++) {
        err = pthread_create(&r->threads[r->started], attr, work, r);
        if (err != EAGAIN)
            break;
        nanosleep(&(struct timespec){0, 1000000L << t}, NULL);
    }
    return err;
}

clg_status clg_batch_reader_create(clg_datastore *ds, size_t batch, size_t workers, size_t depth,
                                   clg_batch_reader **out)
{
    if (out)
        *out = NULL;
    if (!depth)
        depth = 2 * workers;
    if (!ds || !out || !batch || workers > MAX_WORKERS || (workers && depth > MAX_DEPTH))
        return fail(NULL, CLG_ERR_INVALID_ARG, "clg_batch_reader_create: ds and out must not be "
                    "NULL, batch > 0, at most 64 workers and 1024 batches queued");
    clg_batch_reader *r = clg__calloc(1, sizeof *r);
    if (!r)
        return fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_batch_reader_create: out of host memory");
    r->ds = ds;
    r->batch = batch;
    r->per = clg_shape_numel(clg_datastore_sample_shape(ds));
    r->target_bytes = clg__target_bytes(ds);
    r->workers = workers;
    r->depth = workers ? depth : 0;
    atomic_init(&r->samples, 0);
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_batch_reader_create: no mutex");
    }
    pthread_cond_init(&r->work, NULL);
    pthread_cond_init(&r->ready, NULL);
    int ok = 1;
    if (r->depth) {
        r->slots = clg__calloc(r->depth, sizeof *r->slots);
        ok = r->slots != NULL;
        for (size_t i = 0; ok && i < r->depth; i++) {
            r->slots[i].images = clg__malloc(batch * r->per * sizeof(float));
            r->slots[i].targets = clg__malloc(batch * r->target_bytes);
            ok = r->slots[i].images && r->slots[i].targets;
        }
    }
    /* decoding needs little stack: 2 MiB rather than the default 8 keeps a capped process's
     * memory for the queue */
    pthread_attr_t attr;
    int attr_ok = pthread_attr_init(&attr) == 0;
    if (attr_ok)
        pthread_attr_setstacksize(&attr, (size_t)2 << 20);
    int err = 0;
    while (ok && r->started < workers) {
        err = start_worker(r, attr_ok ? &attr : NULL);
        ok = err == 0;
        r->started += ok; /* destroy joins only the threads that started */
    }
    if (attr_ok)
        pthread_attr_destroy(&attr);
    if (!ok) {
        char text[200];
        if (err)
            snprintf(text, sizeof text, "clg_batch_reader_create: cannot start reader thread %zu "
                     "of %zu (%s): out of memory for its stack or of threads", r->started + 1,
                     workers, strerror(err));
        else
            snprintf(text, sizeof text, "clg_batch_reader_create: out of host memory for %zu "
                     "queued batches", r->depth);
        clg_batch_reader_destroy(r);
        return fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, text);
    }
    *out = r;
    return CLG_OK;
}

clg_status clg_batch_reader_start(clg_batch_reader *r, const size_t *order, size_t batches)
{
    if (!r || (batches && !order))
        return fail(r, CLG_ERR_INVALID_ARG, "clg_batch_reader_start: r and order must not be NULL");
    size_t n = batches * r->batch, size = clg_datastore_size(r->ds);
    if (batches && n / batches != r->batch)
        return fail(r, CLG_ERR_INVALID_ARG, "clg_batch_reader_start: too many batches");
    for (size_t i = 0; i < n; i++)
        if (order[i] >= size) {
            char text[160];
            snprintf(text, sizeof text, "clg_batch_reader_start: sample %zu (position %zu) is "
                     "outside the %zu samples", order[i], i, size);
            return fail(r, CLG_ERR_INVALID_ARG, text);
        }
    pthread_mutex_lock(&r->lock);
    r->batches = 0; /* no new claims; the reads of the last pass end before order changes */
    while (r->reading)
        pthread_cond_wait(&r->ready, &r->lock);
    clg_status st = CLG_OK;
    if (n > r->order_cap) {
        size_t *grown = clg__realloc(r->order, n * sizeof *grown);
        if (grown)
            r->order = grown, r->order_cap = n;
        else
            st = CLG_ERR_OUT_OF_HOST_MEMORY;
    }
    if (st == CLG_OK) {
        if (n)
            memcpy(r->order, order, n * sizeof *order);
        for (size_t i = 0; i < r->depth; i++)
            r->slots[i].state = SLOT_FREE;
        r->batches = batches;
        r->claimed = r->taken = 0;
        r->failed = 0;
        pthread_cond_broadcast(&r->work);
    }
    pthread_mutex_unlock(&r->lock);
    return st == CLG_OK ? st : fail(r, st, "clg_batch_reader_start: out of host memory");
}

clg_status clg_batch_reader_next(clg_batch_reader *r, float *images, void *targets)
{
    if (!r || !images || !targets)
        return fail(r, CLG_ERR_INVALID_ARG, "clg_batch_reader_next: r, images and targets must "
                    "not be NULL");
    char msg[CLG__ERR_TEXT];
    if (!r->workers) { /* the caller's thread reads */
        if (r->taken >= r->batches)
            return fail(r, CLG_ERR_INVALID_ARG, "clg_batch_reader_next: no batch left in this pass");
        clg_status st = read_batch(r, r->order + r->taken * r->batch, images, targets, msg,
                                   sizeof msg);
        r->taken++;
        return st == CLG_OK ? st : fail(r, st, msg);
    }
    pthread_mutex_lock(&r->lock);
    if (r->taken >= r->batches) {
        pthread_mutex_unlock(&r->lock);
        return fail(r, CLG_ERR_INVALID_ARG, "clg_batch_reader_next: no batch left in this pass");
    }
    slot *s = &r->slots[r->taken % r->depth];
    while (!(s->state == SLOT_READY && s->batch_index == r->taken) &&
           !(r->failed && r->taken >= r->claimed))
        pthread_cond_wait(&r->ready, &r->lock);
    int arrived = s->state == SLOT_READY && s->batch_index == r->taken;
    pthread_mutex_unlock(&r->lock);
    clg_status st = arrived ? s->st : CLG_ERR_IO;
    if (!arrived)
        snprintf(msg, sizeof msg, "clg_batch_reader_next: an earlier batch of this pass failed");
    else if (st == CLG_OK) {
        memcpy(images, s->images, r->batch * r->per * sizeof *images);
        memcpy(targets, s->targets, r->batch * r->target_bytes);
    } else
        memcpy(msg, s->msg, sizeof msg);
    pthread_mutex_lock(&r->lock);
    if (arrived)
        s->state = SLOT_FREE;
    r->taken++;
    pthread_cond_broadcast(&r->work);
    pthread_mutex_unlock(&r->lock);
    return st == CLG_OK ? st : fail(r, st, msg);
}

uint64_t clg_batch_reader_samples_read(const clg_batch_reader *r)
{
    return r ? atomic_load(&((clg_batch_reader *)r)->samples) : 0;
}

const char *clg_batch_reader_last_error(const clg_batch_reader *r)
{
    return r ? r->last_error : "";
}

void clg_batch_reader_destroy(clg_batch_reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->quit = 1;
    pthread_cond_broadcast(&r->work);
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < r->started; i++)
        pthread_join(r->threads[i], NULL);
    for (size_t i = 0; r->slots && i < r->depth; i++) {
        free(r->slots[i].images);
        free(r->slots[i].targets);
    }
    free(r->slots);
    free(r->order);
    pthread_cond_destroy(&r->work);
    pthread_cond_destroy(&r->ready);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
