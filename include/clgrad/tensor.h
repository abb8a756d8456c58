/* clg_tensor: a float32 NCHW buffer on one device, with its shape. */
#ifndef CLGRAD_TENSOR_H
#define CLGRAD_TENSOR_H

#include <stddef.h>
#include "clgrad/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_tensor clg_tensor;

/* Shape in NCHW order; a matrix is {rows, cols, 1, 1} by convention, a vector {n, 1, 1, 1}. */
typedef struct clg_shape {
    size_t n, c, h, w;
} clg_shape;

/** Number of elements n*c*h*w (0 on overflow). */
CLG_API size_t clg_shape_numel(clg_shape s);

/** Allocates an uninitialised tensor on ctx's device.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG (NULL, a zero dimension, size overflow);
 *          CLG_ERR_OUT_OF_DEVICE_MEMORY naming the bytes asked and the device limit. */
CLG_API clg_status clg_tensor_create(clg_ctx *ctx, clg_shape shape, clg_tensor **out);

/** Frees a tensor or view. A tensor's buffer lives until its last view is destroyed too.
 *  NULL is a no-op. */
CLG_API void clg_tensor_destroy(clg_tensor *t);

/** Shape of t. */
CLG_API clg_shape clg_tensor_shape(const clg_tensor *t);

/** Element count of t. */
CLG_API size_t clg_tensor_numel(const clg_tensor *t);

/** Copies `count` floats from host to t; count must equal clg_tensor_numel(t). Blocking.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for NULL; CLG_ERR_SHAPE when count differs. */
CLG_API clg_status clg_tensor_upload(clg_tensor *t, const float *host, size_t count);

/** Copies t to host; `capacity` is the host buffer's length in floats and must be at least
 *  clg_tensor_numel(t). Blocking.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for NULL or a host buffer that is too small. */
CLG_API clg_status clg_tensor_download(const clg_tensor *t, float *host, size_t capacity);

/** Sets every element of t to value (a kernel; queued, in order with later calls). */
CLG_API clg_status clg_tensor_fill(clg_tensor *t, float value);

/** Copies src into dst; shapes must be equal (CLG_ERR_SHAPE otherwise) and both on the same
 *  context (CLG_ERR_INVALID_ARG otherwise). Queued. */
CLG_API clg_status clg_tensor_copy(clg_tensor *dst, const clg_tensor *src);

/** A view of samples [first, first+count) of t along N, sharing t's memory.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG when the range is empty or past the end.
 *  Destroy the view with clg_tensor_destroy. */
CLG_API clg_status clg_tensor_view_batch(clg_tensor *t, size_t first, size_t count,
                                         clg_tensor **out);

/** t *= alpha, elementwise. */
CLG_API clg_status clg_tensor_scale(clg_tensor *t, float alpha);

/** Sum of the squares of t's elements (blocks): partial sums in float on the device, added in
 *  double in a fixed order on the host, so the same tensor always gives the same value. */
CLG_API clg_status clg_tensor_sum_squares(const clg_tensor *t, double *out);

/** Number of elements of t that are NaN or infinite (blocks). */
CLG_API clg_status clg_tensor_count_nonfinite(const clg_tensor *t, size_t *count);

/** The tensor's OpenCL buffer (a cl_mem, borrowed) and, in *offset, the element offset of its
 *  first element in that buffer (views share their parent's buffer): for interoperation with
 *  other OpenCL code on the same queue (clg_ctx_cl_queue). */
CLG_API void *clg_tensor_cl_buffer(const clg_tensor *t, size_t *offset);

/** Context a tensor lives on (borrowed). */
CLG_API clg_ctx *clg_tensor_ctx(const clg_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
