/* Up-sampling by whole factors: checks and launches (kernels in upsample.cl). */
#include <stdio.h>
#include "tensor/tensor_internal.h"
#include "clgrad/upsample.h"

/* Checks the settings and that big (N x C x H sh x W sw) and small agree. */
static clg_status check(clg_ctx *ctx, const char *call, clg_upsample_mode mode, int sh, int sw,
                        const clg_tensor *small, const clg_tensor *big, const char *big_name)
{
    const clg_tensor *t[2] = {small, big};
    clg_status st = clg__tensors_check(ctx, call, t, 2);
    if (st != CLG_OK)
        return st;
    if ((unsigned)mode > CLG_UPSAMPLE_BILINEAR || sh < 1 || sw < 1 || sh > 4096 || sw > 4096)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: mode nearest or bilinear, factors 1 to "
                         "4096 (got %d, %d)", call, sh, sw);
    clg_shape s = small->shape;
    return clg__tensor_expect_shape(ctx, call, big_name, big,
                                    (clg_shape){s.n, s.c, s.h * (size_t)sh, s.w * (size_t)sw});
}

static clg_status launch(clg_ctx *ctx, const char *kernel, const clg_tensor *in,
                         clg_tensor *out, size_t count, clg_shape small, int sh, int sw,
                         clg_upsample_mode mode)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "upsample", NULL, kernel, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, in);
    clg__arg_tensor(&l, out);
    clg__arg_u64(&l, count);
    clg__arg_u32(&l, small.h);
    clg__arg_u32(&l, small.w);
    clg__arg_u32(&l, (size_t)sh);
    clg__arg_u32(&l, (size_t)sw);
    clg__arg_u32(&l, mode);
    return clg__launch_elementwise(&l, count);
}

clg_status clg_upsample_forward(clg_ctx *ctx, clg_upsample_mode mode, int sh, int sw,
                                const clg_tensor *x, clg_tensor *y)
{
    clg_status st = check(ctx, "clg_upsample_forward", mode, sh, sw, x, y, "y");
    return st == CLG_OK ? launch(ctx, "clg_up_fwd", x, y, clg_tensor_numel(y), x->shape, sh, sw,
                                 mode)
                        : st;
}

clg_status clg_upsample_backward(clg_ctx *ctx, clg_upsample_mode mode, int sh, int sw,
                                 const clg_tensor *dy, clg_tensor *dx)
{
    clg_status st = check(ctx, "clg_upsample_backward", mode, sh, sw, dx, dy, "dy");
    return st == CLG_OK ? launch(ctx, "clg_up_bwd", dy, dx, clg_tensor_numel(dx), dx->shape, sh,
                                 sw, mode)
                        : st;
}
