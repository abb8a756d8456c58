/* The solvers on device tensors, and gradient clipping. */
#include <math.h>
#include <stdlib.h>

#include "clgrad/optim.h"
#include "ops/optim_internal.h"
#include "train/train_internal.h"

clg_status clg__optim_create(clg__trainer *t)
{
    t->nparams = clg__net_params(t->net, NULL, 0);
    size_t n = t->nparams ? t->nparams : 1;
    t->params = clg__calloc(n, sizeof *t->params);
    t->m = clg__calloc(n, sizeof *t->m);
    t->v = clg__calloc(n, sizeof *t->v);
    if (!t->params || !t->m || !t->v)
        return clg__oom(t->ctx, "clg_train");
    clg__net_params(t->net, t->params, t->nparams);
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
        clg_shape s = clg_tensor_shape(t->params[i].param);
        st = clg_tensor_create(t->ctx, s, &t->v[i]);
        if (st == CLG_OK)
            st = clg_tensor_fill(t->v[i], 0.0f);
        if (st == CLG_OK && clg__adam_family(t->o.solver))
            st = clg_tensor_create(t->ctx, s, &t->m[i]);
        if (st == CLG_OK && t->m[i])
            st = clg_tensor_fill(t->m[i], 0.0f);
    }
    return st;
}

void clg__optim_destroy(clg__trainer *t)
{
    for (size_t i = 0; i < t->nparams; i++) {
        if (t->m)
            clg_tensor_destroy(t->m[i]);
        if (t->v)
            clg_tensor_destroy(t->v[i]);
    }
    free(t->m);
    free(t->v);
    free(t->params);
    t->m = t->v = NULL;
    t->params = NULL;
}

/* The solver's parameters for one tensor from the training options: the one mapping from
 * MATLAB's names and defaults (0: the solver's own) to the ops' structs. */
typedef struct solver_params {
    clg_sgd_params sgd;
    clg_adam_params adam;
    clg_rmsprop_params rmsprop;
} solver_params;

static solver_params params_for(const clg__trainer *t, float lr, int decay)
{
    const clg_train_options *o = &t->o;
    float sq = o->squared_gradient_decay_factor, wd = decay ? o->l2_regularization : 0.0f;
    solver_params s = {clg_sgd_params_default(), clg_adam_params_default(),
                       clg_rmsprop_params_default()};
    s.sgd.lr = lr, s.sgd.momentum = o->momentum, s.sgd.weight_decay = wd;
    s.adam.lr = lr, s.adam.beta1 = o->gradient_decay_factor, s.adam.eps = o->epsilon;
    s.adam.beta2 = sq > 0 ? sq : 0.999f;
    s.adam.weight_decay = wd, s.adam.step = (unsigned long)t->step;
    s.adam.decoupled = o->solver == CLG_SOLVER_ADAMW;
    s.rmsprop.lr = lr, s.rmsprop.alpha = sq > 0 ? sq : 0.9f, s.rmsprop.eps = o->epsilon;
    s.rmsprop.weight_decay = wd;
    return s;
}

clg_status clg__optim_step(clg__trainer *t, float lr)
{
    const clg_train_options *o = &t->o;
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
        clg__param_ref *p = &t->params[i];
        solver_params sp = params_for(t, lr * p->lr_factor, p->decay);
        if (o->solver == CLG_SOLVER_SGDM)
            st = clg_sgd_step(t->ctx, &sp.sgd, p->param, p->grad, t->v[i]);
        else if (clg__adam_family(o->solver))
            st = clg_adam_step(t->ctx, &sp.adam, p->param, p->grad, t->m[i], t->v[i]);
        else
            st = clg_rmsprop_step(t->ctx, &sp.rmsprop, p->param, p->grad, t->v[i]);
    }
    return st;
}

int clg__clipping(const clg__trainer *t)
{
    float thr = t->o.gradient_threshold;
    return thr > 0.0f && !isinf(thr);
}

clg_status clg__clip_gradients(clg__trainer *t)
{
    float thr = t->o.gradient_threshold;
    if (!clg__clipping(t))
        return CLG_OK;
    clg_status st = CLG_OK;
    if (t->o.gradient_threshold_method == CLG_GRAD_L2NORM) {
        for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
            double ss;
            st = clg_tensor_sum_squares(t->params[i].grad, &ss);
            double norm = sqrt(ss);
            if (st == CLG_OK && norm > thr)
                st = clg_tensor_scale(t->params[i].grad, (float)(thr / norm));
        }
        return st;
    }
    double total = 0.0;
    for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
        double ss;
        st = clg_tensor_sum_squares(t->params[i].grad, &ss);
        total += ss;
    }
    double norm = sqrt(total);
    for (size_t i = 0; st == CLG_OK && norm > thr && i < t->nparams; i++)
        st = clg_tensor_scale(t->params[i].grad, (float)(thr / norm));
    return st;
}

/* Offsets of each parameter tensor in the flat host arrays. */
static size_t param_len(const clg__trainer *t, size_t i)
{
    return clg_tensor_numel(t->params[i].param);
}

/* The host update of elements [begin, end) of the flat arrays, tensor by tensor (each has its
 * own weight decay); g's arrays hold the gradient of element begin at [0]. */
static clg_status step_range(clg__trainer *t, float lr, float *w, const clg__grad_sum *g,
                             size_t begin, size_t end)
{
    const clg_train_options *o = &t->o;
    size_t at = 0;
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < t->nparams && at < end; i++) {
        size_t n = param_len(t, i), lo = begin > at ? begin : at, hi = end < at + n ? end : at + n;
        at += n;
        if (lo >= hi)
            continue;
        size_t len = hi - lo;
        clg__grad_sum gi = {g->acc ? g->acc + (lo - begin) : NULL, g->last + (lo - begin), g->inv};
        solver_params sp = params_for(t, lr * t->params[i].lr_factor, t->params[i].decay);
        if (o->solver == CLG_SOLVER_SGDM)
            st = clg__sgd_step_host_sum(&sp.sgd, w + lo, &gi, t->hv + lo, len);
        else if (clg__adam_family(o->solver))
            st = clg__adam_step_host_sum(&sp.adam, w + lo, &gi, t->hm + lo, t->hv + lo, len);
        else
            st = clg__rmsprop_step_host_sum(&sp.rmsprop, w + lo, &gi, t->hv + lo, len);
    }
    return st;
}

typedef struct range_job {
    clg__trainer *t;
    float lr;
    float *w;
    size_t begin, end;
    int sum;
    clg_status st;
} range_job;

/* The devices' gradients summed as the update reads them: one or two devices' arrays read
 * directly; with more, all but the last summed slice by slice into a buffer that stays in the
 * L1 cache (a whole-size sum would go to memory and back). */
enum { SUM_SLICE = 2048 };

static clg_status sum_and_step(clg__trainer *t, float lr, float *w, size_t begin, size_t end)
{
    const float *first = NULL, *last = NULL;
    float inv = 1.0f;
    size_t shards = clg__group_shards(t->group, &first, &last, &inv);
    if (!shards)
        return CLG_OK; /* no device worked: nothing to update */
    if (shards <= 2) {
        clg__grad_sum g = {shards == 2 ? first + begin : NULL, last + begin, inv};
        return step_range(t, lr, w, &g, begin, end);
    }
    float slice_sum[SUM_SLICE] __attribute__((aligned(64)));
    clg_status st = CLG_OK;
    for (size_t b = begin; st == CLG_OK && b < end; b += SUM_SLICE) {
        size_t e = end - b > SUM_SLICE ? b + SUM_SLICE : end;
        clg__group_sum_but_last(t->group, slice_sum, b, e);
        st = step_range(t, lr, w, &(clg__grad_sum){slice_sum, last + b, inv}, b, e);
    }
    return st;
}

static void *range_work(void *arg)
{
    range_job *j = arg;
    clg__grad_sum summed = {NULL, j->t->hgrad + j->begin, 1.0f};
    j->st = j->sum ? sum_and_step(j->t, j->lr, j->w, j->begin, j->end)
                   : step_range(j->t, j->lr, j->w, &summed, j->begin, j->end);
    return NULL;
}

void clg__optim_update_range(void *user, float *w, size_t lo, size_t hi)
{
    clg__trainer *t = user;
    clg_status st = sum_and_step(t, t->update_lr, w, lo, hi);
    t->update_st = t->update_st == CLG_OK ? st : t->update_st;
}

/* Slices of the elements on one thread per device, this one and the group's idle workers:
 * the update is elementwise, so the slicing changes no result. */
clg_status clg__optim_step_host(clg__trainer *t, float lr, int sum)
{
    size_t total = 0, threads = t->x.context_count < 16 ? t->x.context_count : 16;
    float *w = clg__group_params(t->group, &total); /* once: it marks the weights changed */
    clg__crew *crew = clg__group_crew(t->group);
    threads = threads ? threads : 1;
    range_job jobs[16];
    size_t per = (total + threads - 1) / threads;
    per = (per + 15) / 16 * 16; /* whole cache lines per thread */
    for (size_t i = 0; i < threads; i++) {
        size_t b = i * per < total ? i * per : total, e = b + per < total ? b + per : total;
        jobs[i] = (range_job){t, lr, w, b, e, sum, CLG_OK};
        if (i > 0 && !clg__crew_start(crew, i - 1, range_work, &jobs[i]))
            range_work(&jobs[i]);
    }
    range_work(&jobs[0]);
    clg_status st = jobs[0].st;
    for (size_t i = 1; i < threads; i++) {
        clg__crew_wait(crew, i - 1);
        if (st == CLG_OK)
            st = jobs[i].st;
    }
    return st;
}

void clg__clip_gradients_host(clg__trainer *t)
{
    float thr = t->o.gradient_threshold;
    if (!clg__clipping(t))
        return;
    size_t at = 0;
    double total = 0.0;
    for (size_t i = 0; i < t->nparams; i++) {
        size_t n = param_len(t, i);
        double ss = 0.0;
        for (size_t k = 0; k < n; k++)
            ss += (double)t->hgrad[at + k] * t->hgrad[at + k];
        if (t->o.gradient_threshold_method == CLG_GRAD_L2NORM && sqrt(ss) > thr)
            for (size_t k = 0; k < n; k++)
                t->hgrad[at + k] *= (float)(thr / sqrt(ss));
        total += ss;
        at += n;
    }
    if (t->o.gradient_threshold_method == CLG_GRAD_GLOBAL_L2NORM && sqrt(total) > thr)
        for (size_t k = 0; k < at; k++)
            t->hgrad[k] *= (float)(thr / sqrt(total));
}

static clg_status moments(clg__trainer *t, int to_device)
{
    clg_status st = CLG_OK;
    size_t at = 0;
    for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
        size_t n = param_len(t, i);
        for (int which = 0; which < 2 && st == CLG_OK; which++) {
            clg_tensor *d = which ? t->v[i] : t->m[i];
            float *h = which ? t->hv : t->hm;
            if (!d)
                continue;
            st = to_device ? clg_tensor_upload(d, h + at, n) : clg_tensor_download(d, h + at, n);
        }
        at += n;
    }
    return st;
}

clg_status clg__optim_host_from_device(clg__trainer *t)
{
    return moments(t, 0);
}

clg_status clg__optim_host_to_device(clg__trainer *t)
{
    return moments(t, 1);
}
