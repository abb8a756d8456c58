/* clgrad: portable OpenCL training of convolutional networks. Umbrella header. */
#ifndef CLGRAD_CLGRAD_H
#define CLGRAD_CLGRAD_H

#include "clgrad/status.h"
#include "clgrad/device.h"
#include "clgrad/context.h"
#include "clgrad/tensor.h"
#include "clgrad/ops.h"
#include "clgrad/nn.h"
#include "clgrad/onnx.h"
#include "clgrad/data.h"
#include "clgrad/parallel.h"
#include "clgrad/train.h"
#include "clgrad/metrics.h"
#include "clgrad/cluster.h"
#include "clgrad/experiment.h"

#endif
