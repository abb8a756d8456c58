/* The tensor struct, for the ops layer: a buffer, an element offset into it, and a shape. */
#ifndef CLGRAD_TENSOR_INTERNAL_H
#define CLGRAD_TENSOR_INTERNAL_H

#include "clgrad/tensor.h"
#include "runtime/runtime_internal.h"

/* Work-group size of the reductions, given to cl_kernels/tensor.cl as -DSUMSQ_LOCAL: the
 * "tensor" family's build options, in one place for its launches and the warm-up. */
#define CLG__REDUCE_LOCAL 64
#define CLG__STR_(x) #x
#define CLG__STR(x) CLG__STR_(x)
#define CLG__TENSOR_OPTIONS "-DSUMSQ_LOCAL=" CLG__STR(CLG__REDUCE_LOCAL)

struct clg_tensor {
    clg_ctx *ctx;     /* borrowed */
    cl_mem mem;       /* retained by every tensor or view on it */
    size_t offset;    /* in elements, from the start of mem */
    clg_shape shape;
};

/* Argument checks shared by every op: ctx is set and each of the n tensors is non-NULL and
 * lives on ctx (CLG_ERR_INVALID_ARG naming the argument otherwise). */
clg_status clg__tensors_check(clg_ctx *ctx, const char *call, const clg_tensor *const *t, size_t n);

/* CLG_ERR_SHAPE unless the n tensors all have as many elements as the first. */
clg_status clg__tensors_same_numel(clg_ctx *ctx, const char *call, const clg_tensor *const *t, size_t n);

/* CLG_ERR_SHAPE "<call>: <name> is AxBxCxD, expected ..." unless t has shape want. */
clg_status clg__tensor_expect_shape(clg_ctx *ctx, const char *call, const char *name,
                                    const clg_tensor *t, clg_shape want);

int clg__shape_equal(clg_shape a, clg_shape b);

/* A tensor as two kernel arguments: its buffer and its element offset. */
void clg__arg_tensor(clg__launch *l, const clg_tensor *t);

/* out = a + b, then max(out, 0) when relu; the three with equal element counts (out may be
 * a). For networks' residual sums and gradient sums. */
clg_status clg__tensor_add(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                           clg_tensor *out, int relu);
/* out = a + b where mask > 0, else 0 (mask: a ReLU's output; same element counts). */
clg_status clg__tensor_add_masked(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                                  const clg_tensor *mask, clg_tensor *out);
/* Between a tensor of C channels and the channels [at, at + C) of a wider one of the same
 * batch and pixels (concatenation along channels): to_wide 1 copies narrow into wide, 0 the
 * other way. */
/* Channel shuffle of x into y (same shape, not the same buffer): y's channel c is x's
 * (c % groups) * (C / groups) + c / groups; groups divides C. groups C / groups undoes it. */
clg_status clg__tensor_shuffle(clg_ctx *ctx, const clg_tensor *x, clg_tensor *y, size_t groups);
clg_status clg__tensor_stack(clg_ctx *ctx, clg_tensor *narrow, clg_tensor *wide, size_t at,
                             int to_wide);

/* Dropout of a shard: in's element i is element base + i of the whole batch, and draws that
 * element's mask (public dropout is base 0). */
clg_status clg__dropout(clg_ctx *ctx, int backward, float p, uint64_t seed, uint64_t step,
                        size_t base, const clg_tensor *in, clg_tensor *out);

#endif
