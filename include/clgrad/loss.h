/* Softmax cross-entropy with integer labels. */
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

#ifdef __cplusplus
}
#endif
#endif
