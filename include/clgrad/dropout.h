/* Dropout with counter-based masks: the same mask for the same (seed, step, element) on every
 * device, so that replicas of one mini-batch drop the same units. */
#ifndef CLGRAD_DROPOUT_H
#define CLGRAD_DROPOUT_H

#include <stdint.h>
#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Dropout: element i is kept when a Philox4x32-10 draw for (seed, step, i) is at least p;
 *  kept elements are scaled by 1 / (1 - p), the others zeroed. Deterministic for (seed, step):
 *  the backward pass redraws the same mask instead of storing it. 0 <= p < 1; y may be x. */
CLG_API clg_status clg_dropout_forward(clg_ctx *ctx, float p, uint64_t seed, uint64_t step,
                                       const clg_tensor *x, clg_tensor *y);

/** dx = dy * mask / (1 - p) with the mask of the same (seed, step). dx may be dy. */
CLG_API clg_status clg_dropout_backward(clg_ctx *ctx, float p, uint64_t seed, uint64_t step,
                                        const clg_tensor *dy, clg_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif
