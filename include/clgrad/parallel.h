/* Data-parallel training across devices: how a mini-batch is split. The device group itself is
 * driven by clg_train with clg_train_options.contexts (see train.h). */
#ifndef CLGRAD_PARALLEL_H
#define CLGRAD_PARALLEL_H

#include <stddef.h>
#include "clgrad/status.h"
#include "clgrad/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Splits `batch` samples into n contiguous shards in proportion to weights (MATLAB's
 *  WorkerLoad): counts[i] = floor(batch * w_i / sum w), then the samples left over go one each
 *  to the largest remainders (ties to the lower index). A weight of 0 gets no samples; shards
 *  may be empty when there are more devices than samples.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for n = 0, NULL arrays, a negative or non-finite
 *          weight, or weights that are all 0. */
CLG_API clg_status clg_split_batch(size_t batch, const float *weights, size_t n, size_t *counts);

#ifdef __cplusplus
}
#endif

#endif
