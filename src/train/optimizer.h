/* The optimizer: the solver's settings, the learnable tensors and gradients it updates, and
 * its state (moments), on the device and, for a device group's host master weights, on the
 * host. It takes parameters, gradients and the step number; it knows nothing of trainers,
 * groups or clusters. */
#ifndef CLGRAD_TRAIN_OPTIMIZER_H
#define CLGRAD_TRAIN_OPTIMIZER_H

#include "clgrad/train.h"
#include "nn/nn_internal.h"
#include "ops/optim_internal.h"

typedef struct clg__optimizer {
    clg_ctx *ctx;
    clg_solver solver;
    float momentum, beta1, beta2, epsilon, l2;  /* beta2 0: the solver's default */
    float clip;                                 /* gradient threshold; off unless > 0, finite */
    clg_grad_threshold_method clip_method;
    size_t n;                    /* learnable tensors ... */
    clg__param_ref *params;      /* ... of the net: each with its gradient, decay, rate factor */
    size_t floats;               /* their elements, in clg_net_get_params order */
    clg_tensor **m, **v;         /* device moments per tensor (m: Adam family only) */
    float *hm, *hv;              /* host moments over all elements (clg__optim_host), or NULL */
} clg__optimizer;

/* Zeroed moments for every learnable of net, on its context, and the settings of o. */
clg_status clg__optim_create(clg__optimizer *op, clg_net *net, const clg_train_options *o);
void clg__optim_destroy(clg__optimizer *op);

/* One update of the device tensors at rate lr, after `step` steps (Adam's bias correction). */
clg_status clg__optim_step(clg__optimizer *op, float lr, uint64_t step);
/* Whether gradients are clipped; the clipping of the device gradients (no-op when off). */
int clg__optim_clipping(const clg__optimizer *op);
clg_status clg__optim_clip(clg__optimizer *op);

/* Host moments (for updates of host master weights), taken from the device moments. */
clg_status clg__optim_host(clg__optimizer *op);
/* The update of host weights w, elements [begin, end) of the flat vector, tensor by tensor
 * (each has its own decay and rate factor); g holds the gradient of element `begin` at [0]. */
clg_status clg__optim_step_host(clg__optimizer *op, float lr, uint64_t step, float *w,
                                const clg__grad_sum *g, size_t begin, size_t end);
/* The clipping of a host gradient over all elements (no-op when off). */
void clg__optim_clip_host(const clg__optimizer *op, float *grad);
/* Host moments to and from the device tensors (checkpoints read the device ones). */
clg_status clg__optim_host_to_device(clg__optimizer *op);
clg_status clg__optim_host_from_device(clg__optimizer *op);

static inline int clg__adam_family(clg_solver s)
{
    return s == CLG_SOLVER_ADAM || s == CLG_SOLVER_ADAMW;
}

#endif
