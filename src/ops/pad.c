/* Spatial padding: descriptor checks, output size, launches (kernels in pad.cl). */
#include <stdio.h>
#include "tensor/tensor_internal.h"
#include "clgrad/pad.h"

clg_pad2d_desc clg_pad2d_desc_default(void)
{
    clg_pad2d_desc d = {CLG_PAD_CONSTANT, 0, 0, 0, 0, 0.0f};
    return d;
}

static clg_status output_shape(clg_ctx *ctx, const clg_pad2d_desc *d, clg_shape x, clg_shape *y)
{
    if (!d)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "pad2d: descriptor is NULL");
    if ((unsigned)d->mode > CLG_PAD_EDGE)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "pad2d: mode is not a clg_pad_mode");
    if (d->mode != CLG_PAD_CONSTANT && (d->top < 0 || d->bottom < 0 || d->left < 0 || d->right < 0))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "pad2d: negative pads (a crop) are for the "
                         "constant mode only");
    long oh = (long)x.h + d->top + d->bottom, ow = (long)x.w + d->left + d->right;
    if (oh < 1 || ow < 1 || x.h > (size_t)1 << 30 || x.w > (size_t)1 << 30 || oh > 1L << 30 ||
        ow > 1L << 30)
        return clg__fail(ctx, CLG_ERR_SHAPE, "pad2d: a %zux%zu input padded by %d,%d,%d,%d "
                         "(top, bottom, left, right) is %ldx%ld", x.h, x.w, d->top, d->bottom,
                         d->left, d->right, oh, ow);
    if (d->mode == CLG_PAD_REFLECT && ((size_t)d->top >= x.h || (size_t)d->bottom >= x.h ||
                                       (size_t)d->left >= x.w || (size_t)d->right >= x.w))
        return clg__fail(ctx, CLG_ERR_SHAPE, "pad2d: reflection pads %d,%d,%d,%d must be below "
                         "the %zux%zu input's sides", d->top, d->bottom, d->left, d->right, x.h,
                         x.w);
    *y = (clg_shape){x.n, x.c, (size_t)oh, (size_t)ow};
    return CLG_OK;
}

clg_status clg_pad2d_output_shape(const clg_pad2d_desc *d, clg_shape x, clg_shape *y)
{
    if (!y)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_pad2d_output_shape: y is NULL");
    return output_shape(NULL, d, x, y);
}

static void geom_args(clg__launch *l, const clg_pad2d_desc *d, clg_shape in, clg_shape out)
{
    clg__arg_u32(l, in.h);
    clg__arg_u32(l, in.w);
    clg__arg_u32(l, out.h);
    clg__arg_u32(l, out.w);
    clg__arg_u32(l, (size_t)(unsigned)d->top);
    clg__arg_u32(l, (size_t)(unsigned)d->left);
    clg__arg_u32(l, d->mode);
}

clg_status clg_pad2d_forward(clg_ctx *ctx, const clg_pad2d_desc *d, const clg_tensor *x,
                             clg_tensor *y)
{
    clg_shape out;
    clg_status st = clg__tensors_check(ctx, "clg_pad2d_forward", (const clg_tensor *[]){x, y}, 2);
    if (st == CLG_OK)
        st = output_shape(ctx, d, x->shape, &out);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pad2d", "y", y, out);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "pad", NULL, "clg_pad_fwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, y);
    clg__arg_u64(&l, clg_shape_numel(out));
    geom_args(&l, d, x->shape, out);
    clg__arg_f32(&l, d->value);
    return clg__launch_elementwise(&l, clg_shape_numel(out));
}

clg_status clg_pad2d_backward(clg_ctx *ctx, const clg_pad2d_desc *d, const clg_tensor *dy,
                              clg_tensor *dx)
{
    clg_shape out;
    clg_status st = clg__tensors_check(ctx, "clg_pad2d_backward", (const clg_tensor *[]){dy, dx}, 2);
    if (st == CLG_OK)
        st = output_shape(ctx, d, dx->shape, &out);
    if (st == CLG_OK)
        st = clg__tensor_expect_shape(ctx, "pad2d", "dy", dy, out);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "pad", NULL, "clg_pad_bwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, dx);
    clg__arg_u64(&l, clg_tensor_numel(dx));
    geom_args(&l, d, dx->shape, out);
    return clg__launch_elementwise(&l, clg_tensor_numel(dx));
}
