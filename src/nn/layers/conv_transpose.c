/* Layer entry: 2-D transposed convolution ("convt 2x2x16 stride=2 pad=0 outpad=0,0 dilation=1
 * groups=1 bias=1"), the layer that makes images larger (U-Net's up-sampling, ONNX's
 * ConvTranspose). It is the data gradient of a convolution from its output's channels to its
 * input's, so each pass is another pass of that convolution on the fast kernels: forward the
 * convolution's data gradient, data gradient its forward pass, weight gradient its weight
 * gradient with the roles of input and output exchanged. Weights C_in x C_out/groups x R x S,
 * as ONNX stores them (the convolution's K x C/groups x R x S). */
#include <stdio.h>
#include <string.h>

#include "clgrad/fc.h"
#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    clg_status st;
    if (clg__conv_option(p, o, 0, l, &st)) /* pad (explicit only), stride, dilation, groups, bias */
        return st;
    if (clg__option_is(o, "outpad"))
        return clg__option_pair(p, o, 0, &l->out_pad_h, &l->out_pad_w);
    return clg__option_unknown(p, o, "convt", "pad, stride, dilation, outpad, groups, bias");
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long k[3];
    clg_status st = clg__text_sizes(p, tok, ntok, 3, "convt HxWxFILTERS [stride=..] [pad=..]", k);
    l->conv = clg_conv2d_desc_default();
    l->bias = 1;
    if (st == CLG_OK)
        st = clg__layer_options(p, tok, ntok, 2, l, option);
    if (st != CLG_OK)
        return st;
    l->kernel_h = (size_t)k[0], l->kernel_w = (size_t)k[1], l->filters = (size_t)k[2];
    return CLG_OK;
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    const clg_conv2d_desc *d = &l->conv;
    clg__text_put(o, "convt %zux%zux%zu", l->kernel_h, l->kernel_w, l->filters);
    if (d->stride_h != 1 || d->stride_w != 1)
        clg__text_pair(o, "stride", d->stride_h, d->stride_w);
    clg__text_pad(o, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right);
    if (l->out_pad_h || l->out_pad_w)
        clg__text_pair(o, "outpad", l->out_pad_h, l->out_pad_w);
    if (d->dilation_h != 1 || d->dilation_w != 1)
        clg__text_pair(o, "dilation", d->dilation_h, d->dilation_w);
    if (d->groups != 1)
        clg__text_put(o, " groups=%d", d->groups);
    if (!l->bias)
        clg__text_put(o, " bias=0");
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    const clg_conv2d_desc *d = &l->conv;
    if (!l->kernel_h || !l->kernel_w || !l->filters)
        snprintf(why, cap, "kernel %zux%zu with %zu filters has a zero size", l->kernel_h,
                 l->kernel_w, l->filters);
    else if (l->out_pad_h < 0 || l->out_pad_w < 0 || l->out_pad_h >= d->stride_h ||
             l->out_pad_w >= d->stride_w)
        snprintf(why, cap, "output padding %d,%d must be below the stride %d,%d", l->out_pad_h,
                 l->out_pad_w, d->stride_h, d->stride_w);
    else if (d->groups < 1 || l->filters % (size_t)d->groups)
        snprintf(why, cap, "%d groups do not divide %zu filters", d->groups, l->filters);
    else
        return CLG_OK;
    return CLG_ERR_INVALID_ARG;
}

/* The convolution it transposes: from the output's channels (filters) to the input's. */
static clg_shape conv_weights(const clg__layer *l)
{
    return (clg_shape){l->in.c, l->filters / (size_t)l->conv.groups, l->kernel_h, l->kernel_w};
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    const clg_conv2d_desc *d = &l->conv;
    if (l->in.c % (size_t)d->groups) {
        snprintf(why, cap, "%d groups do not divide %zu input channels", d->groups, l->in.c);
        return CLG_ERR_SHAPE;
    }
    long h = ((long)l->in.h - 1) * d->stride_h - d->pad_top - d->pad_bottom +
             d->dilation_h * ((long)l->kernel_h - 1) + 1 + l->out_pad_h;
    long w = ((long)l->in.w - 1) * d->stride_w - d->pad_left - d->pad_right +
             d->dilation_w * ((long)l->kernel_w - 1) + 1 + l->out_pad_w;
    if (h < 1 || w < 1) {
        snprintf(why, cap, "a %zux%zu input gives a %ldx%ld output (padding larger than the "
                 "kernel's reach)", l->in.h, l->in.w, h, w);
        return CLG_ERR_SHAPE;
    }
    *out = (clg_shape){1, l->filters, (size_t)h, (size_t)w};
    /* the convolution back from it must give the input's size exactly */
    clg_shape back;
    if (clg_conv2d_output_shape(d, *out, conv_weights(l), &back) != CLG_OK ||
        back.h != l->in.h || back.w != l->in.w) {
        snprintf(why, cap, "no convolution maps %zux%zu back to %zux%zu with these settings",
                 out->h, out->w, l->in.h, l->in.w);
        return CLG_ERR_SHAPE;
    }
    return CLG_OK;
}

static clg_status alloc(clg_net *net, clg__layer *l)
{
    l->nparams = l->bias ? 2 : 1;
    l->decay[0] = 1;
    clg_status st = clg__layer_tensor(net, conv_weights(l), 0.0f, &l->param[0]);
    if (st == CLG_OK && l->bias)
        st = clg__layer_tensor(net, (clg_shape){1, l->filters, 1, 1}, 0.0f, &l->param[1]);
    return st;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    clg_status st = clg_conv2d_backward_data(net->ctx, &l->conv, clg__net_input(net, i),
                                             l->param[0], &l->y_n);
    return st == CLG_OK && l->bias ? clg_bias_add(net->ctx, l->param[1], &l->y_n) : st;
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *dy = clg__net_output_grad(net, i), *x = clg__net_input(net, i);
    clg_status st = clg_conv2d_backward_weights(net->ctx, &l->conv, dy, x, l->grad[0]);
    if (st == CLG_OK && l->bias)
        st = clg_conv2d_backward_bias(net->ctx, dy, l->grad[1]);
    if (st == CLG_OK && clg__net_needs_dx(net, i, 0))
        st = clg_conv2d_forward(net->ctx, &l->conv, dy, l->param[0], NULL, &l->dx_n[0]);
    return st;
}

static double flops(const clg__layer *l)
{
    double macs = (double)clg_shape_numel(l->in) * (double)(l->filters / (size_t)l->conv.groups) *
                  (double)(l->kernel_h * l->kernel_w);
    return 2.0 * macs + (l->bias ? (double)clg_shape_numel(l->out) : 0.0);
}

static const char *const keywords[] = {"convt", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const clg_conv2d_desc *d = &l->conv;
    char *w = clg__onnx_name(ex, l->name, ".weight");
    char *b = l->bias ? clg__onnx_name(ex, l->name, ".bias") : NULL;
    clg_shape ws = conv_weights(l);
    int64_t dims[4] = {(int64_t)ws.n, (int64_t)ws.c, (int64_t)ws.h, (int64_t)ws.w};
    int64_t bdims[1] = {(int64_t)l->filters};
    clg__onnx_initializer(ex, w, l->param[0], NULL, dims, 4);
    if (b)
        clg__onnx_initializer(ex, b, l->param[1], NULL, bdims, 1);
    Onnx__NodeProto *n = clg__onnx_node(ex, "ConvTranspose", l->name, clg__onnx_input(ex, i, 0),
                                        w, b);
    int64_t ks[2] = {(int64_t)l->kernel_h, (int64_t)l->kernel_w};
    int64_t st[2] = {d->stride_h, d->stride_w}, dil[2] = {d->dilation_h, d->dilation_w};
    int64_t pads[4] = {d->pad_top, d->pad_left, d->pad_bottom, d->pad_right};
    int64_t op[2] = {l->out_pad_h, l->out_pad_w};
    clg__onnx_attr_ints(ex, n, "kernel_shape", ks, 2);
    clg__onnx_attr_ints(ex, n, "strides", st, 2);
    clg__onnx_attr_ints(ex, n, "dilations", dil, 2);
    clg__onnx_attr_ints(ex, n, "pads", pads, 4);
    clg__onnx_attr_ints(ex, n, "output_padding", op, 2);
    clg__onnx_attr_int(ex, n, "group", d->groups);
}

const clg__layer_def clg__layer_conv_transpose = {
    .kind = CLG_LAYER_CONV_TRANSPOSE, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .alloc = alloc, .forward = forward, .backward = backward,
    .init = clg__layer_init_weights, .flops = flops, .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_conv_transpose(clg_net *net, size_t kernel_h, size_t kernel_w,
                                      size_t filters, const clg_conv2d_desc *d, int out_pad_h,
                                      int out_pad_w, int bias)
{
    clg__layer l = {.kind = CLG_LAYER_CONV_TRANSPOSE, .kernel_h = kernel_h, .kernel_w = kernel_w,
                    .filters = filters, .bias = bias != 0, .out_pad_h = out_pad_h,
                    .out_pad_w = out_pad_w, .conv = d ? *d : clg_conv2d_desc_default()};
    l.conv.relu = 0, l.conv.relu_max = 0.0f;
    return clg__net_append(net, &l, "clg_net_add_conv_transpose");
}
