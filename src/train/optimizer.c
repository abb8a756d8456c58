/* The solvers on device tensors and on host arrays, and gradient clipping (optimizer.h). */
#include <math.h>
#include <stdlib.h>

#include "clgrad/optim.h"
#include "train/optimizer.h"

clg_status clg__optim_create(clg__optimizer *op, clg_net *net, const clg_train_options *o)
{
    clg_ctx *ctx = clg_net_ctx(net);
    *op = (clg__optimizer){.ctx = ctx, .solver = o->solver, .momentum = o->momentum,
                           .beta1 = o->gradient_decay_factor,
                           .beta2 = o->squared_gradient_decay_factor, .epsilon = o->epsilon,
                           .l2 = o->l2_regularization, .clip = o->gradient_threshold,
                           .clip_method = o->gradient_threshold_method};
    op->n = clg__net_params(net, NULL, 0);
    size_t n = op->n ? op->n : 1;
    op->params = clg__calloc(n, sizeof *op->params);
    op->m = clg__calloc(n, sizeof *op->m);
    op->v = clg__calloc(n, sizeof *op->v);
    if (!op->params || !op->m || !op->v)
        return clg__oom(ctx, "clg_train");
    clg__net_params(net, op->params, op->n);
    op->floats = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < op->n; i++) {
        clg_shape s = clg_tensor_shape(op->params[i].param);
        st = clg_tensor_create(ctx, s, &op->v[i]);
        if (st == CLG_OK)
            st = clg_tensor_fill(op->v[i], 0.0f);
        if (st == CLG_OK && clg__adam_family(op->solver))
            st = clg_tensor_create(ctx, s, &op->m[i]);
        if (st == CLG_OK && op->m[i])
            st = clg_tensor_fill(op->m[i], 0.0f);
    }
    return st;
}

void clg__optim_destroy(clg__optimizer *op)
{
    for (size_t i = 0; i < op->n; i++) {
        if (op->m)
            clg_tensor_destroy(op->m[i]);
        if (op->v)
            clg_tensor_destroy(op->v[i]);
    }
    free(op->m);
    free(op->v);
    free(op->params);
    free(op->hm);
    free(op->hv);
    *op = (clg__optimizer){0};
}

/* The solver's parameters for one tensor: the one mapping from MATLAB's names and defaults
 * (0: the solver's own) to the ops' structs. */
typedef struct solver_params {
    clg_sgd_params sgd;
    clg_adam_params adam;
    clg_rmsprop_params rmsprop;
} solver_params;

static solver_params params_for(const clg__optimizer *op, float lr, int decay, uint64_t step)
{
    float sq = op->beta2, wd = decay ? op->l2 : 0.0f;
    solver_params s = {clg_sgd_params_default(), clg_adam_params_default(),
                       clg_rmsprop_params_default()};
    s.sgd.lr = lr, s.sgd.momentum = op->momentum, s.sgd.weight_decay = wd;
    s.adam.lr = lr, s.adam.beta1 = op->beta1, s.adam.eps = op->epsilon;
    s.adam.beta2 = sq > 0 ? sq : 0.999f;
    s.adam.weight_decay = wd, s.adam.step = (unsigned long)step;
    s.adam.decoupled = op->solver == CLG_SOLVER_ADAMW;
    s.rmsprop.lr = lr, s.rmsprop.alpha = sq > 0 ? sq : 0.9f, s.rmsprop.eps = op->epsilon;
    s.rmsprop.weight_decay = wd;
    return s;
}

clg_status clg__optim_step(clg__optimizer *op, float lr, uint64_t step)
{
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < op->n; i++) {
        clg__param_ref *p = &op->params[i];
        solver_params sp = params_for(op, lr * p->lr_factor, p->decay, step);
        if (op->solver == CLG_SOLVER_SGDM)
            st = clg_sgd_step(op->ctx, &sp.sgd, p->param, p->grad, op->v[i]);
        else if (clg__adam_family(op->solver))
            st = clg_adam_step(op->ctx, &sp.adam, p->param, p->grad, op->m[i], op->v[i]);
        else
            st = clg_rmsprop_step(op->ctx, &sp.rmsprop, p->param, p->grad, op->v[i]);
    }
    return st;
}

int clg__optim_clipping(const clg__optimizer *op)
{
    return op->clip > 0.0f && !isinf(op->clip);
}

clg_status clg__optim_clip(clg__optimizer *op)
{
    float thr = op->clip;
    if (!clg__optim_clipping(op))
        return CLG_OK;
    clg_status st = CLG_OK;
    if (op->clip_method == CLG_GRAD_L2NORM) {
        for (size_t i = 0; st == CLG_OK && i < op->n; i++) {
            double ss;
            st = clg_tensor_sum_squares(op->params[i].grad, &ss);
            double norm = sqrt(ss);
            if (st == CLG_OK && norm > thr)
                st = clg_tensor_scale(op->params[i].grad, (float)(thr / norm));
        }
        return st;
    }
    double total = 0.0;
    for (size_t i = 0; st == CLG_OK && i < op->n; i++) {
        double ss;
        st = clg_tensor_sum_squares(op->params[i].grad, &ss);
        total += ss;
    }
    double norm = sqrt(total);
    for (size_t i = 0; st == CLG_OK && norm > thr && i < op->n; i++)
        st = clg_tensor_scale(op->params[i].grad, (float)(thr / norm));
    return st;
}

static size_t param_len(const clg__optimizer *op, size_t i)
{
    return clg_tensor_numel(op->params[i].param);
}

clg_status clg__optim_host(clg__optimizer *op)
{
    size_t n = op->floats + 1;
    op->hm = clg__calloc_pages(n * sizeof(float));
    op->hv = clg__calloc_pages(n * sizeof(float));
    if (!op->hm || !op->hv)
        return clg__oom(op->ctx, "clg_train");
    return clg__optim_host_from_device(op);
}

clg_status clg__optim_step_host(clg__optimizer *op, float lr, uint64_t step, float *w,
                                const clg__grad_sum *g, size_t begin, size_t end)
{
    size_t at = 0;
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < op->n && at < end; i++) {
        size_t n = param_len(op, i), lo = begin > at ? begin : at, hi = end < at + n ? end : at + n;
        at += n;
        if (lo >= hi)
            continue;
        size_t len = hi - lo;
        clg__grad_sum gi = {g->acc ? g->acc + (lo - begin) : NULL, g->last + (lo - begin), g->inv};
        solver_params sp = params_for(op, lr * op->params[i].lr_factor, op->params[i].decay, step);
        if (op->solver == CLG_SOLVER_SGDM)
            st = clg__sgd_step_host_sum(&sp.sgd, w + lo, &gi, op->hv + lo, len);
        else if (clg__adam_family(op->solver))
            st = clg__adam_step_host_sum(&sp.adam, w + lo, &gi, op->hm + lo, op->hv + lo, len);
        else
            st = clg__rmsprop_step_host_sum(&sp.rmsprop, w + lo, &gi, op->hv + lo, len);
    }
    return st;
}

void clg__optim_clip_host(const clg__optimizer *op, float *grad)
{
    float thr = op->clip;
    if (!clg__optim_clipping(op))
        return;
    size_t at = 0;
    double total = 0.0;
    for (size_t i = 0; i < op->n; i++) {
        size_t n = param_len(op, i);
        double ss = 0.0;
        for (size_t k = 0; k < n; k++)
            ss += (double)grad[at + k] * grad[at + k];
        if (op->clip_method == CLG_GRAD_L2NORM && sqrt(ss) > thr)
            for (size_t k = 0; k < n; k++)
                grad[at + k] *= (float)(thr / sqrt(ss));
        total += ss;
        at += n;
    }
    if (op->clip_method == CLG_GRAD_GLOBAL_L2NORM && sqrt(total) > thr)
        for (size_t k = 0; k < at; k++)
            grad[k] *= (float)(thr / sqrt(total));
}

static clg_status moments(clg__optimizer *op, int to_device)
{
    clg_status st = CLG_OK;
    size_t at = 0;
    for (size_t i = 0; st == CLG_OK && op->hv && i < op->n; i++) {
        size_t n = param_len(op, i);
        for (int which = 0; which < 2 && st == CLG_OK; which++) {
            clg_tensor *d = which ? op->v[i] : op->m[i];
            float *h = which ? op->hv : op->hm;
            if (!d)
                continue;
            st = to_device ? clg_tensor_upload(d, h + at, n) : clg_tensor_download(d, h + at, n);
        }
        at += n;
    }
    return st;
}

clg_status clg__optim_host_from_device(clg__optimizer *op)
{
    return moments(op, 0);
}

clg_status clg__optim_host_to_device(clg__optimizer *op)
{
    return moments(op, 1);
}
