/* Batch normalisation (per channel). */
#ifndef CLGRAD_NORM_H
#define CLGRAD_NORM_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Training mode: per channel c, mean and variance of x over n, h, w (biased variance);
 *  y = gamma * (x - mean) / sqrt(var + eps) + beta; running_mean and running_var (C values
 *  each, may be NULL) become (1 - momentum) * running + momentum * batch statistic (the
 *  running variance uses the unbiased estimate, as PyTorch). save_mean and save_invstd (C
 *  values) receive mean and 1 / sqrt(var + eps) for the backward pass. gamma, beta: C values. */
CLG_API clg_status clg_batchnorm_forward_train(clg_ctx *ctx, const clg_tensor *x,
                                               const clg_tensor *gamma, const clg_tensor *beta,
                                               float momentum, float eps,
                                               clg_tensor *running_mean, clg_tensor *running_var,
                                               clg_tensor *save_mean, clg_tensor *save_invstd,
                                               clg_tensor *y);

/** Inference mode: y = gamma * (x - running_mean) / sqrt(running_var + eps) + beta. */
CLG_API clg_status clg_batchnorm_forward_infer(clg_ctx *ctx, const clg_tensor *x,
                                               const clg_tensor *gamma, const clg_tensor *beta,
                                               const clg_tensor *running_mean,
                                               const clg_tensor *running_var, float eps,
                                               clg_tensor *y);

/** Backward of training mode: dx, dgamma and dbeta (overwritten) from x, dy, gamma and the
 *  saved statistics. */
CLG_API clg_status clg_batchnorm_backward(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *dy,
                                          const clg_tensor *gamma, const clg_tensor *save_mean,
                                          const clg_tensor *save_invstd, clg_tensor *dx,
                                          clg_tensor *dgamma, clg_tensor *dbeta);

#ifdef __cplusplus
}
#endif
#endif
