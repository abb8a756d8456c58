/* The training state inside a checkpoint: position, validation history, optimizer moments and
 * the best parameters so far, little-endian, read back with every length checked. */
#include <stdlib.h>
#include <string.h>

#include "train/train_internal.h"

#define STATE_VERSION 1u

typedef struct writer {
    unsigned char *p;
    size_t len, cap;
    int failed;
} writer;

static void put(writer *w, const void *data, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *bigger = clg__realloc(w->p, cap);
        if (!bigger) {
            w->failed = 1;
            return;
        }
        w->p = bigger;
        w->cap = cap;
    }
    memcpy(w->p + w->len, data, n);
    w->len += n;
}

/* Fixed-width fields are copied as they are: model files are little-endian only. */
static void put_u64(writer *w, uint64_t v) { put(w, &v, 8); }
static void put_f64(writer *w, double v) { put(w, &v, 8); }

typedef struct reader {
    const unsigned char *p;
    size_t len, at;
    int failed;
} reader;

static void get(reader *r, void *out, size_t n)
{
    if (r->failed || r->len - r->at < n) {
        r->failed = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p + r->at, n);
    r->at += n;
}

static uint64_t get_u64(reader *r) { uint64_t v; get(r, &v, 8); return v; }
static double get_f64(reader *r) { double v; get(r, &v, 8); return v; }

/* Moments in a fixed order: m (adam) then v, parameter by parameter. */
static clg_tensor *moment(clg__trainer *t, size_t i, int which)
{
    return which == 0 ? t->opt.m[i] : t->opt.v[i];
}

clg_status clg__train_state_save(clg__trainer *t, unsigned char **blob, size_t *len)
{
    writer w = {0};
    put_u64(&w, STATE_VERSION);
    put_u64(&w, (uint64_t)t->o.solver);
    put_u64(&w, t->batch);
    put_u64(&w, t->step);
    put_u64(&w, (uint64_t)t->epoch);
    put_u64(&w, t->next_iter);
    put_u64(&w, t->seed);
    put_u64(&w, (uint64_t)t->has_val);
    put_f64(&w, t->val_loss);
    put_f64(&w, t->val_acc);
    put_f64(&w, t->best_val_loss);
    put_f64(&w, t->best_val_acc);
    put_u64(&w, t->best_iter);
    put_u64(&w, (uint64_t)t->bad_validations);
    put_f64(&w, t->elapsed_before + clg__now() - t->t0);
    clg_status st = CLG_OK;
    float *tmp = NULL;
    size_t tmp_cap = 0;
    for (int which = 0; which < 2 && st == CLG_OK; which++)
        for (size_t i = 0; i < t->opt.n && st == CLG_OK; i++) {
            clg_tensor *m = moment(t, i, which);
            if (!m)
                continue;
            size_t n = clg_tensor_numel(m);
            if (n > tmp_cap) {
                float *bigger = clg__realloc(tmp, n * sizeof *tmp);
                if (!bigger) {
                    w.failed = 1;
                    break;
                }
                tmp = bigger;
                tmp_cap = n;
            }
            st = clg_tensor_download(m, tmp, n);
            put(&w, tmp, n * sizeof *tmp);
        }
    free(tmp);
    put_u64(&w, t->best ? t->best_count : 0);
    if (t->best)
        put(&w, t->best, t->best_count * sizeof *t->best);
    put_f64(&w, t->plateau_scale); /* last: checkpoints written before the schedule lack them */
    put_u64(&w, (uint64_t)t->plateau_bad);
    if (st == CLG_OK && w.failed)
        st = clg__oom(t->ctx, "checkpoint");
    if (st != CLG_OK) {
        free(w.p);
        return st;
    }
    *blob = w.p;
    *len = w.len;
    return CLG_OK;
}

static clg_status corrupt(clg__trainer *t, const char *why)
{
    return clg__fail(t->ctx, CLG_ERR_CORRUPT, "checkpoint training state: %s", why);
}

clg_status clg__train_state_load(clg__trainer *t, const unsigned char *blob, size_t len)
{
    reader r = {blob, len, 0, 0};
    if (get_u64(&r) != STATE_VERSION)
        return corrupt(t, "unknown version");
    uint64_t solver = get_u64(&r), batch = get_u64(&r);
    if (!r.failed && solver != (uint64_t)t->o.solver)
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "resume: the checkpoint was trained with %s, "
                         "the options ask for %s", clg_solver_name((clg_solver)solver)
                         ? clg_solver_name((clg_solver)solver) : "?", clg_solver_name(t->o.solver));
    if (!r.failed && batch != t->batch)
        return clg__fail(t->ctx, CLG_ERR_INVALID_ARG, "resume: the checkpoint used mini-batches "
                         "of %llu, the options ask for %zu", (unsigned long long)batch, t->batch);
    t->step = get_u64(&r);
    t->epoch = (int)get_u64(&r);
    t->next_iter = get_u64(&r);
    t->seed = get_u64(&r);
    t->has_val = (int)get_u64(&r);
    t->val_loss = get_f64(&r);
    t->val_acc = get_f64(&r);
    t->best_val_loss = get_f64(&r);
    t->best_val_acc = get_f64(&r);
    t->best_iter = get_u64(&r);
    t->bad_validations = (int)get_u64(&r);
    t->elapsed_before = get_f64(&r);
    if (r.failed || t->next_iter > t->iters_per_epoch || t->epoch < 0)
        return corrupt(t, "truncated or out-of-range position");
    clg_status st = CLG_OK;
    for (int which = 0; which < 2 && st == CLG_OK; which++)
        for (size_t i = 0; i < t->opt.n && st == CLG_OK; i++) {
            clg_tensor *m = moment(t, i, which);
            if (!m)
                continue;
            size_t n = clg_tensor_numel(m);
            if (r.len - r.at < n * sizeof(float))
                return corrupt(t, "optimizer state shorter than the network's parameters");
            float *tmp = clg__malloc(n * sizeof *tmp);
            if (!tmp)
                return clg__oom(t->ctx, "resume");
            get(&r, tmp, n * sizeof *tmp);
            st = clg_tensor_upload(m, tmp, n);
            free(tmp);
        }
    uint64_t nbest = get_u64(&r);
    if (st == CLG_OK && nbest) {
        if (nbest != t->best_count || r.len - r.at < nbest * sizeof(float))
            return corrupt(t, "best parameters do not match the network");
        t->best = clg__malloc(nbest * sizeof *t->best);
        if (!t->best)
            return clg__oom(t->ctx, "resume");
        get(&r, t->best, nbest * sizeof *t->best);
    }
    if (st == CLG_OK && r.len - r.at >= 16) { /* written since the plateau schedule */
        t->plateau_scale = get_f64(&r);
        t->plateau_bad = (int)get_u64(&r);
        if (!(t->plateau_scale >= 0.0 && t->plateau_scale <= 1.0) || t->plateau_bad < 0)
            return corrupt(t, "plateau schedule state out of range");
    }
    if (st == CLG_OK && (r.failed || r.at != r.len))
        return corrupt(t, "wrong length");
    return st;
}
