/* The solvers on device tensors, and gradient clipping. */
#include <math.h>
#include <stdlib.h>

#include "clgrad/optim.h"
#include "train/train_internal.h"

clg_status clg__optim_create(clg__trainer *t)
{
    t->nparams = clg__net_params(t->net, NULL, 0);
    size_t n = t->nparams ? t->nparams : 1;
    t->params = clg__calloc(n, sizeof *t->params);
    t->m = clg__calloc(n, sizeof *t->m);
    t->v = clg__calloc(n, sizeof *t->v);
    if (!t->params || !t->m || !t->v)
        return clg__fail(t->ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_train: out of host memory");
    clg__net_params(t->net, t->params, t->nparams);
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
        clg_shape s = clg_tensor_shape(t->params[i].param);
        st = clg_tensor_create(t->ctx, s, &t->v[i]);
        if (st == CLG_OK)
            st = clg_tensor_fill(t->v[i], 0.0f);
        if (st == CLG_OK && t->o.solver == CLG_SOLVER_ADAM)
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

clg_status clg__optim_step(clg__trainer *t, float lr)
{
    const clg_train_options *o = &t->o;
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < t->nparams; i++) {
        clg__param_ref *p = &t->params[i];
        float wd = p->decay ? o->l2_regularization : 0.0f;
        if (o->solver == CLG_SOLVER_SGDM) {
            clg_sgd_params sp = {lr, o->momentum, wd, 0};
            st = clg_sgd_step(t->ctx, &sp, p->param, p->grad, t->v[i]);
        } else if (o->solver == CLG_SOLVER_ADAM) {
            float b2 = o->squared_gradient_decay_factor > 0 ? o->squared_gradient_decay_factor : 0.999f;
            clg_adam_params ap = {lr, o->gradient_decay_factor, b2, o->epsilon, wd, 0,
                                  (unsigned long)t->step};
            st = clg_adam_step(t->ctx, &ap, p->param, p->grad, t->m[i], t->v[i]);
        } else {
            float a = o->squared_gradient_decay_factor > 0 ? o->squared_gradient_decay_factor : 0.9f;
            clg_rmsprop_params rp = {lr, a, o->epsilon, wd};
            st = clg_rmsprop_step(t->ctx, &rp, p->param, p->grad, t->v[i]);
        }
    }
    return st;
}

clg_status clg__clip_gradients(clg__trainer *t)
{
    float thr = t->o.gradient_threshold;
    if (!(thr > 0.0f) || isinf(thr))
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
