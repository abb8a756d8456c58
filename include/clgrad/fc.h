/* Fully connected layers (on GEMM) and the per-channel bias they and convolutions add. */
#ifndef CLGRAD_FC_H
#define CLGRAD_FC_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

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
