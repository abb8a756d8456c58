/* Losses: softmax cross-entropy with integer labels (one per sample, or one per pixel) and
 * regression losses against float targets. */
#ifndef CLGRAD_LOSS_H
#define CLGRAD_LOSS_H

#include <stdint.h>
#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** For logits (N x classes, any shape with n = N), computed stably (log-sum-exp: logits of
 *  +-1e4 give finite results): loss_i = logsumexp(logits_i) - logits_i[label_i].
 *  @param labels N host integers in [0, classes).
 *  @param losses NULL or a tensor of N values receiving each sample's loss.
 *  @param mean_loss NULL or receives the mean loss (summed on the host in double, in order).
 *  @param correct NULL or receives how many samples have their label as the first largest
 *         logit.
 *  Blocks when mean_loss or correct is asked for.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for a label outside [0, classes) (naming it) or NULL;
 *          CLG_ERR_SHAPE when n_labels != N. */
CLG_API clg_status clg_softmax_xent_forward(clg_ctx *ctx, const clg_tensor *logits,
                                            const int32_t *labels, size_t n_labels,
                                            clg_tensor *losses, double *mean_loss,
                                            size_t *correct);

/** dlogits = scale * (softmax(logits) - onehot(labels)); scale 1/N gives the gradient of the
 *  mean loss, 1 that of the sum (what a device's shard contributes in multi-device training).
 *  dlogits may be logits. */
CLG_API clg_status clg_softmax_xent_backward(clg_ctx *ctx, const clg_tensor *logits,
                                             const int32_t *labels, size_t n_labels, float scale,
                                             clg_tensor *dlogits);

/* A pixel label that no loss or metric counts (an unlabelled pixel). */
#define CLG_LABEL_IGNORE (-1)
/* Most classes a class list or a per-pixel loss's class weights name. */
#define CLG_CLASS_WEIGHTS_MAX 256

/* Regression losses, per sample over its R values (MATLAB's regressionLayer, PyTorch's
 * MSELoss / L1Loss with reduction "mean" when every sample has the same R): */
typedef enum clg_regression_loss {
    CLG_REGRESSION_MSE = 0, /* half mean squared error: 0.5 * mean((y - t)^2) */
    CLG_REGRESSION_L1 = 1   /* mean absolute error: mean(|y - t|) */
} clg_regression_loss;

/** Regression loss of y (N samples of R values, any shape) against targets (N x R host floats,
 *  in y's order). mean_loss: the mean of the samples' losses (summed in double, in order).
 *  Blocks. @return CLG_OK; CLG_ERR_SHAPE when n_values != N x R; CLG_ERR_INVALID_ARG. */
CLG_API clg_status clg_regression_forward(clg_ctx *ctx, clg_regression_loss loss,
                                          const clg_tensor *y, const float *targets,
                                          size_t n_values, double *mean_loss);

/** dy = scale * d(sum of the samples' losses)/dy: scale * (y - t) / R (MSE) or scale * sign(y -
 *  t) / R (L1, 0 where equal); scale 1/N for the mean. dy may be y. */
CLG_API clg_status clg_regression_backward(clg_ctx *ctx, clg_regression_loss loss,
                                           const clg_tensor *y, const float *targets,
                                           size_t n_values, float scale, clg_tensor *dy);

/** Per-pixel softmax cross-entropy (MATLAB's pixelClassificationLayer) of logits N x K x H x W
 *  (K classes over the channels) against labels (N x H x W host integers in [0, K), or
 *  CLG_LABEL_IGNORE): a sample's loss is the sum over its labelled pixels of w[label] *
 *  (logsumexp - logit[label]), divided by H x W (every pixel: a per-sample mean, so that the
 *  gradient of a batch is the sum of its samples'). weights: NULL (all 1) or K host values >= 0.
 *  mean_loss: the mean over samples; correct: labelled pixels whose first largest logit is the
 *  label; labelled: labelled pixels. Each output may be NULL. Blocks.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for a label outside [0, K) other than CLG_LABEL_IGNORE
 *          (naming it) or a negative weight; CLG_ERR_SHAPE when n_labels != N x H x W. */
CLG_API clg_status clg_pixel_xent_forward(clg_ctx *ctx, const clg_tensor *logits,
                                          const int32_t *labels, size_t n_labels,
                                          const float *weights, double *mean_loss,
                                          size_t *correct, size_t *labelled);

/** dlogits = scale * w[label] / (H W) * (softmax - onehot(label)) at each labelled pixel, 0 at
 *  ignored ones; scale 1/N for the mean. dlogits may be logits. */
CLG_API clg_status clg_pixel_xent_backward(clg_ctx *ctx, const clg_tensor *logits,
                                           const int32_t *labels, size_t n_labels,
                                           const float *weights, float scale,
                                           clg_tensor *dlogits);

#ifdef __cplusplus
}
#endif
#endif
