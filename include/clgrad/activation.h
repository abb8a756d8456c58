/* Elementwise activations, channel bias, and fully connected layers (on GEMM). */
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

/** y[n][c][h][w] += bias[c]; bias holds C values. */
CLG_API clg_status clg_bias_add(clg_ctx *ctx, const clg_tensor *bias, clg_tensor *y);

/** db[c] = sum of dy over n, h, w (overwrites; C values), in a fixed order. */
CLG_API clg_status clg_bias_backward(clg_ctx *ctx, const clg_tensor *dy, clg_tensor *db);

/** Fully connected: y (N x M) = x (N x K, any NCHW with c*h*w = K) . w^T + bias, w stored
 *  M x K (as PyTorch's Linear); bias NULL or M values; y any shape of N x M elements with
 *  n = N. */
CLG_API clg_status clg_fc_forward(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *w,
                                  const clg_tensor *bias, clg_tensor *y);

/** dx (N x K) = dy (N x M) . w. */
CLG_API clg_status clg_fc_backward_data(clg_ctx *ctx, const clg_tensor *dy, const clg_tensor *w,
                                        clg_tensor *dx);

/** dw (M x K) = dy^T . x, summed over the batch (overwrites). The bias gradient is
 *  clg_bias_backward of dy. */
CLG_API clg_status clg_fc_backward_weights(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *dy,
                                           clg_tensor *dw);

#ifdef __cplusplus
}
#endif
#endif
