/* Elementwise activations (ReLU and its relatives, sigmoid, tanh). */
#ifndef CLGRAD_ACTIVATION_H
#define CLGRAD_ACTIVATION_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_activation {
    CLG_ACT_RELU = 0,
    CLG_ACT_LEAKY_RELU = 1, /* x > 0 ? x : alpha * x */
    CLG_ACT_ELU = 2,        /* x > 0 ? x : alpha * (exp(x) - 1) */
    CLG_ACT_SIGMOID = 3,
    CLG_ACT_TANH = 4
} clg_activation;

/** y = f(x) elementwise; x and y have equal element counts and may be the same tensor.
 *  alpha is used by leaky ReLU and ELU only. */
CLG_API clg_status clg_activation_forward(clg_ctx *ctx, clg_activation f, float alpha,
                                          const clg_tensor *x, clg_tensor *y);

/** dx = dy * f'(x); x is the forward input and y its output (sigmoid and tanh use y, the
 *  others x). dx may be dy. */
CLG_API clg_status clg_activation_backward(clg_ctx *ctx, clg_activation f, float alpha,
                                           const clg_tensor *x, const clg_tensor *y,
                                           const clg_tensor *dy, clg_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif
