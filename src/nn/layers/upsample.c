/* Layer entry: up-sampling by whole factors ("upsample 2", "upsample 2,3 mode=bilinear"):
 * U-Net's decoder without weights, ONNX's Resize with scales. */
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static const char *const modes[] = {"nearest", "bilinear"};

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (clg__option_is(o, "mode")) {
        for (int m = CLG_UPSAMPLE_NEAREST; m <= CLG_UPSAMPLE_BILINEAR; m++)
            if (o->vlen == strlen(modes[m]) && !strncmp(o->v, modes[m], o->vlen)) {
                l->up_mode = (clg_upsample_mode)m;
                return CLG_OK;
            }
        return clg__option_bad(p, o, "nearest or bilinear");
    }
    return clg__option_unknown(p, o, "upsample", "mode");
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long f[2];
    int n = ntok > 1 ? clg__text_ints(tok[1].s, tok[1].len, ',', f, 2) : 0;
    if (n < 1 || f[0] < 1 || (n == 2 && f[1] < 1) || f[0] > 4096 || (n == 2 && f[1] > 4096))
        return clg__text_error(p, ntok > 1 ? &tok[1] : &tok[0], CLG_ERR_INVALID_ARG,
                               "expected upsample FACTOR or upsample ROWS,COLUMNS (1 to 4096)");
    l->up_h = (int)f[0], l->up_w = (int)(n == 2 ? f[1] : f[0]);
    l->up_mode = CLG_UPSAMPLE_NEAREST;
    return clg__layer_options(p, tok, ntok, 2, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    if (l->up_h == l->up_w)
        clg__text_put(o, "upsample %d", l->up_h);
    else
        clg__text_put(o, "upsample %d,%d", l->up_h, l->up_w);
    if (l->up_mode != CLG_UPSAMPLE_NEAREST)
        clg__text_put(o, " mode=%s", modes[l->up_mode]);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->up_h >= 1 && l->up_w >= 1 && l->up_h <= 4096 && l->up_w <= 4096 &&
        (unsigned)l->up_mode <= CLG_UPSAMPLE_BILINEAR)
        return CLG_OK;
    snprintf(why, cap, "factors %d,%d (1 to 4096) or a mode other than nearest or bilinear",
             l->up_h, l->up_w);
    return CLG_ERR_INVALID_ARG;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    (void)why, (void)cap;
    *out = (clg_shape){1, l->in.c, l->in.h * (size_t)l->up_h, l->in.w * (size_t)l->up_w};
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    return clg_upsample_forward(net->ctx, l->up_mode, l->up_h, l->up_w, clg__net_input(net, i),
                                &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    return clg_upsample_backward(net->ctx, l->up_mode, l->up_h, l->up_w,
                                 clg__net_output_grad(net, i), &l->dx_n[0]);
}

static double flops(const clg__layer *l)
{
    return l->up_mode == CLG_UPSAMPLE_BILINEAR ? 6.0 * (double)clg_shape_numel(l->out) : 0.0;
}

static const char *const keywords[] = {"upsample", NULL};

/* Resize (opset 13 on: roi empty, scales 1, 1, rows, columns), as PyTorch writes
 * F.interpolate: nearest with asymmetric coordinates and floor, bilinear with half pixels. */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const char *scales = clg__onnx_name(ex, l->name, ".scales");
    const float s[4] = {1.0f, 1.0f, (float)l->up_h, (float)l->up_w};
    const int64_t four = 4;
    if (!scales)
        return;
    clg__onnx_initializer(ex, scales, NULL, s, &four, 1);
    Onnx__NodeProto *n = clg__onnx_node(ex, "Resize", l->name, clg__onnx_input(ex, i, 0), "",
                                        scales);
    int bilinear = l->up_mode == CLG_UPSAMPLE_BILINEAR;
    clg__onnx_attr_string(ex, n, "mode", bilinear ? "linear" : "nearest");
    clg__onnx_attr_string(ex, n, "coordinate_transformation_mode",
                          bilinear ? "half_pixel" : "asymmetric");
    if (!bilinear)
        clg__onnx_attr_string(ex, n, "nearest_mode", "floor");
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_upsample = {
    .kind = CLG_LAYER_UPSAMPLE, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .forward = forward, .backward = backward, .flops = flops,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_upsample(clg_net *net, clg_upsample_mode mode, int factor_h, int factor_w)
{
    clg__layer l = {.kind = CLG_LAYER_UPSAMPLE, .up_mode = mode, .up_h = factor_h,
                    .up_w = factor_w};
    return clg__net_append(net, &l, "clg_net_add_upsample");
}
