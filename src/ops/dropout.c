/* Dropout: the same kernel scales forward activations and backward gradients by the mask. */
#include "tensor/tensor_internal.h"
#include "clgrad/norm.h"

static clg_status run(clg_ctx *ctx, const char *call, float p, uint64_t seed, uint64_t step,
                      const clg_tensor *in, clg_tensor *out)
{
    if (!ctx || !in || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: NULL argument", call);
    if (in->ctx != ctx || out->ctx != ctx)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: tensors must live on ctx", call);
    if (!(p >= 0.0f && p < 1.0f))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: p = %g must be in [0, 1)", call, (double)p);
    size_t n = clg_tensor_numel(in);
    if (clg_tensor_numel(out) != n)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: %zu elements in, %zu out", call, n, clg_tensor_numel(out));
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "dropout", NULL, "clg_dropout", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, in->mem);
    clg__arg_u64(&l, in->offset);
    clg__arg_mem(&l, out->mem);
    clg__arg_u64(&l, out->offset);
    clg__arg_u64(&l, n);
    clg__arg_f32(&l, p);
    clg__arg_u64(&l, seed);
    clg__arg_u64(&l, step);
    size_t global[3] = {n, 1, 1}, local[3] = {64, 1, 1};
    return clg__launch_run(&l, global, local);
}

clg_status clg_dropout_forward(clg_ctx *ctx, float p, uint64_t seed, uint64_t step,
                               const clg_tensor *x, clg_tensor *y)
{
    return run(ctx, "clg_dropout_forward", p, seed, step, x, y);
}

clg_status clg_dropout_backward(clg_ctx *ctx, float p, uint64_t seed, uint64_t step,
                                const clg_tensor *dy, clg_tensor *dx)
{
    return run(ctx, "clg_dropout_backward", p, seed, step, dy, dx);
}
