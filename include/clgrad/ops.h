/* Compute operations on tensors: each op is a forward and a backward on explicit tensors with a
 * descriptor; ops know nothing of networks. */
#ifndef CLGRAD_OPS_H
#define CLGRAD_OPS_H

#include "clgrad/gemm.h"
#include "clgrad/conv.h"
#include "clgrad/pool.h"
#include "clgrad/activation.h"
#include "clgrad/fc.h"
#include "clgrad/loss.h"
#include "clgrad/norm.h"
#include "clgrad/dropout.h"
#include "clgrad/optim.h"

#endif
