/* Compute operations on tensors: each op is a forward and a backward on explicit tensors with a
 * descriptor; ops know nothing of networks. */
#ifndef CLGRAD_OPS_H
#define CLGRAD_OPS_H

#include "clgrad/gemm.h"
#include "clgrad/conv.h"
#include "clgrad/pool.h"
#include "clgrad/pad.h"
#include "clgrad/upsample.h"
#include "clgrad/activation.h"
#include "clgrad/fc.h"
#include "clgrad/loss.h"
#include "clgrad/norm.h"
#include "clgrad/dropout.h"
#include "clgrad/optim.h"
#include "clgrad/tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Builds (or loads from cache) every embedded kernel family of the ops on ctx now rather
 *  than on first use, e.g. to measure start-up or to fail early.
 *  @return CLG_OK or the first build error. */
CLG_API clg_status clg_ctx_warm_up(clg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
