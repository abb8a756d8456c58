/* Optimizer steps on device tensors, and the same updates in plain C on host arrays (for the
 * master weights of multi-device training); both follow PyTorch's formulas. */
#ifndef CLGRAD_OPTIM_H
#define CLGRAD_OPTIM_H

#include <stddef.h>
#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each params struct begins with struct_size, set by its _default() (README "Compatibility"):
 * start from the _default() and change the fields you need. */
typedef struct clg_sgd_params {
    size_t struct_size;
    float lr;
    float momentum;      /* 0: plain SGD */
    float weight_decay;  /* L2: g += weight_decay * w */
    int nesterov;        /* 1: Nesterov momentum */
} clg_sgd_params;

/** PyTorch's SGD defaults: lr 0.01, no momentum, no weight decay, not Nesterov. */
CLG_API clg_sgd_params clg_sgd_params_default(void);

/* d = g + wd * w; v = momentum * v + d; w -= lr * (nesterov ? d + momentum * v : v). */
typedef struct clg_adam_params {
    size_t struct_size;
    float lr, beta1, beta2, eps;
    float weight_decay;  /* Adam: added to the gradient; AdamW: w -= lr * wd * w first */
    int decoupled;       /* 1: AdamW */
    unsigned long step;  /* t >= 1, for the bias corrections */
} clg_adam_params;

/** PyTorch's Adam defaults: lr 0.001, betas 0.9 and 0.999, eps 1e-8, no weight decay, step 1. */
CLG_API clg_adam_params clg_adam_params_default(void);

typedef struct clg_rmsprop_params {
    size_t struct_size;
    float lr;
    float alpha;         /* decay of the squared-gradient average (MATLAB 0.9, PyTorch 0.99) */
    float eps;
    float weight_decay;  /* L2: g += weight_decay * w */
} clg_rmsprop_params;

/** MATLAB's RMSProp defaults: lr 0.001, alpha 0.9, eps 1e-8, no weight decay. */
CLG_API clg_rmsprop_params clg_rmsprop_params_default(void);
/* g' = g + wd * w; v = alpha * v + (1 - alpha) * g'^2; w -= lr * g' / (sqrt(v) + eps). */

/** One SGD step on w with gradient g and velocity v (all the same element count). */
CLG_API clg_status clg_sgd_step(clg_ctx *ctx, const clg_sgd_params *p, clg_tensor *w,
                                const clg_tensor *g, clg_tensor *v);

/** One Adam / AdamW step with first and second moments m and v. */
CLG_API clg_status clg_adam_step(clg_ctx *ctx, const clg_adam_params *p, clg_tensor *w,
                                 const clg_tensor *g, clg_tensor *m, clg_tensor *v);

/** One RMSProp step with the squared-gradient average v. */
CLG_API clg_status clg_rmsprop_step(clg_ctx *ctx, const clg_rmsprop_params *p, clg_tensor *w,
                                    const clg_tensor *g, clg_tensor *v);

/** The same updates on host arrays of n floats. @return CLG_OK or CLG_ERR_INVALID_ARG. */
CLG_API clg_status clg_sgd_step_host(const clg_sgd_params *p, float *w, const float *g, float *v,
                                     size_t n);
CLG_API clg_status clg_adam_step_host(const clg_adam_params *p, float *w, const float *g, float *m,
                                      float *v, size_t n);
CLG_API clg_status clg_rmsprop_step_host(const clg_rmsprop_params *p, float *w, const float *g,
                                         float *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
