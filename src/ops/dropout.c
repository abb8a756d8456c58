/* Dropout: the same kernel scales forward activations and backward gradients by the mask. */
#include "tensor/tensor_internal.h"
#include "clgrad/dropout.h"

static clg_status run(clg_ctx *ctx, const char *call, float p, uint64_t seed, uint64_t step,
                      size_t base, const clg_tensor *in, clg_tensor *out)
{
    const clg_tensor *t[2] = {in, out};
    clg_status st = clg__tensors_check(ctx, call, t, 2);
    if (st != CLG_OK)
        return st;
    if (!(p >= 0.0f && p < 1.0f))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: p = %g must be in [0, 1)", call, (double)p);
    size_t n = clg_tensor_numel(in);
    if ((st = clg__tensors_same_numel(ctx, call, t, 2)) != CLG_OK)
        return st;
    clg__launch l;
    st = clg__launch_begin(ctx, "dropout", NULL, "clg_dropout", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, in);
    clg__arg_tensor(&l, out);
    clg__arg_u64(&l, n);
    clg__arg_f32(&l, p);
    clg__arg_u64(&l, seed);
    clg__arg_u64(&l, step);
    clg__arg_u64(&l, base);
    size_t global[3] = {(base % 4 + n + 3) / 4, 1, 1}, local[3] = {64, 1, 1}; /* a block each */
    return clg__launch_run(&l, global, local);
}

clg_status clg_dropout_forward(clg_ctx *ctx, float p, uint64_t seed, uint64_t step,
                               const clg_tensor *x, clg_tensor *y)
{
    return run(ctx, "clg_dropout_forward", p, seed, step, 0, x, y);
}

clg_status clg_dropout_backward(clg_ctx *ctx, float p, uint64_t seed, uint64_t step,
                                const clg_tensor *dy, clg_tensor *dx)
{
    return run(ctx, "clg_dropout_backward", p, seed, step, 0, dy, dx);
}

clg_status clg__dropout(clg_ctx *ctx, int backward, float p, uint64_t seed, uint64_t step,
                        size_t base, const clg_tensor *in, clg_tensor *out)
{
    return run(ctx, backward ? "clg_dropout_backward" : "clg_dropout_forward", p, seed, step, base,
               in, out);
}
