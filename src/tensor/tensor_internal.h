/* The tensor struct, for the ops layer: a buffer, an element offset into it, and a shape. */
#ifndef CLGRAD_TENSOR_INTERNAL_H
#define CLGRAD_TENSOR_INTERNAL_H

#include "clgrad/tensor.h"
#include "runtime/runtime_internal.h"

struct clg_tensor {
    clg_ctx *ctx;     /* borrowed */
    cl_mem mem;       /* retained by every tensor or view on it */
    size_t offset;    /* in elements, from the start of mem */
    clg_shape shape;
};

#endif
