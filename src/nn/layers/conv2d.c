/* Layer entry: 2-D convolution ("conv 5x5x32 pad=2 stride=1 dilation=1 groups=1 bias=1
 * algo=auto workspace=0"). */
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

int clg__conv_option(const clg__parser *p, const clg__option *o, int same_ok, clg__layer *l,
                     clg_status *st)
{
    clg_conv2d_desc *d = &l->conv;
    if (clg__option_is(o, "pad")) {
        int pad[4] = {0, 0, 0, 0};
        *st = clg__option_pad(p, o, same_ok, &l->pad_same, pad);
        d->pad_top = pad[0], d->pad_bottom = pad[1], d->pad_left = pad[2], d->pad_right = pad[3];
    } else if (clg__option_is(o, "stride")) {
        *st = clg__option_pair(p, o, 1, &d->stride_h, &d->stride_w);
    } else if (clg__option_is(o, "dilation")) {
        *st = clg__option_pair(p, o, 1, &d->dilation_h, &d->dilation_w);
    } else if (clg__option_is(o, "groups")) {
        long g;
        int ok = clg__text_ints(o->v, o->vlen, ',', &g, 1) == 1 && g >= 1;
        *st = ok ? CLG_OK : clg__option_bad(p, o, "a count >= 1");
        if (ok)
            d->groups = (int)g;
    } else if (clg__option_is(o, "bias")) {
        *st = clg__option_flag(p, o, &l->bias);
    } else {
        return 0;
    }
    return 1;
}

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    clg_conv2d_desc *d = &l->conv;
    clg_status st;
    if (clg__conv_option(p, o, 1, l, &st))
        return st;
    if (clg__option_is(o, "algo")) {
        for (int a = CLG_CONV_ALGO_AUTO; a <= CLG_CONV_ALGO_DEPTHWISE; a++) {
            const char *name = clg_conv_algo_name((clg_conv_algo)a);
            if (o->vlen == strlen(name) && !strncmp(o->v, name, o->vlen)) {
                d->algo = (clg_conv_algo)a;
                return CLG_OK;
            }
        }
        return clg__option_bad(p, o, "auto, im2col, implicit, winograd, gemm, depthwise or find");
    }
    if (clg__option_is(o, "workspace"))
        return clg__option_bytes(p, o, &d->workspace_limit);
    return clg__option_unknown(p, o, "conv",
                               "pad, stride, dilation, groups, bias, algo, workspace");
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long k[3];
    clg_status st = clg__text_sizes(p, tok, ntok, 3, "conv HxWxFILTERS [pad=..] [stride=..]", k);
    l->conv = clg_conv2d_desc_default();
    l->bias = 1;
    if (st == CLG_OK)
        st = clg__layer_options(p, tok, ntok, 2, l, option);
    if (st != CLG_OK)
        return st;
    l->kernel_h = (size_t)k[0], l->kernel_w = (size_t)k[1], l->filters = (size_t)k[2];
    return CLG_OK; /* pad=same: resolved when the input's size is known (clg__layer_pad_same) */
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    const clg_conv2d_desc *d = &l->conv;
    clg__text_put(o, "conv %zux%zux%zu", l->kernel_h, l->kernel_w, l->filters);
    clg__text_pad(o, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right);
    if (d->stride_h != 1 || d->stride_w != 1)
        clg__text_pair(o, "stride", d->stride_h, d->stride_w);
    if (d->dilation_h != 1 || d->dilation_w != 1)
        clg__text_pair(o, "dilation", d->dilation_h, d->dilation_w);
    if (d->groups != 1)
        clg__text_put(o, " groups=%d", d->groups);
    if (!l->bias)
        clg__text_put(o, " bias=0");
    if (d->algo != CLG_CONV_ALGO_AUTO)
        clg__text_put(o, " algo=%s", clg_conv_algo_name(d->algo));
    if (d->workspace_limit)
        clg__text_bytes(o, "workspace", d->workspace_limit);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (!l->kernel_h || !l->kernel_w || !l->filters)
        snprintf(why, cap, "kernel %zux%zu with %zu filters has a zero size", l->kernel_h,
                 l->kernel_w, l->filters);
    else if (l->conv.algo < CLG_CONV_ALGO_AUTO || l->conv.algo > CLG_CONV_ALGO_DEPTHWISE)
        snprintf(why, cap, "unknown algorithm %d", (int)l->conv.algo);
    else if (l->conv.relu)
        snprintf(why, cap, "d->relu must be 0: add a relu layer after the convolution (the "
                           "network fuses it)");
    else
        return CLG_OK;
    return CLG_ERR_INVALID_ARG;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    clg_shape in = l->in;
    if (l->conv.groups < 1 || in.c % (size_t)l->conv.groups) {
        snprintf(why, cap, "%d groups do not divide %zu input channels", l->conv.groups, in.c);
        return CLG_ERR_SHAPE;
    }
    clg_shape w = {l->filters, in.c / (size_t)l->conv.groups, l->kernel_h, l->kernel_w};
    clg_status st = clg_conv2d_output_shape(&l->conv, in, w, out);
    if (st != CLG_OK)
        snprintf(why, cap, "%s", clg_last_error());
    return st;
}

static clg_status alloc(clg_net *net, clg__layer *l)
{
    l->nparams = l->bias ? 2 : 1;
    l->decay[0] = 1;
    clg_shape w = {l->filters, l->in.c / (size_t)l->conv.groups, l->kernel_h, l->kernel_w};
    clg_status st = clg__layer_tensor(net, w, 0.0f, &l->param[0]);
    if (st == CLG_OK && l->bias)
        st = clg__layer_tensor(net, (clg_shape){1, l->filters, 1, 1}, 0.0f, &l->param[1]);
    return st;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_conv2d_desc d = l->conv;
    d.relu = l->plan.relu_fused;
    d.relu_max = l->plan.relu_max;
    const clg_tensor *residual = NULL;
    if (l->plan.sum_fused) { /* the residual sum after it (and its ReLU) in its epilogue */
        residual = clg__net_fused_sum(net, i, &d.relu);
        d.relu_max = 0.0f;
    }
    /* the SiLU after it in the inference layout (where the SiLU's output is this one's) */
    int silu = l->plan.silu_fused && clg__net_infer_fusions(net, train);
    /* training: what the weight gradient can reuse is kept */
    return clg__conv2d_forward_keep(net->ctx, &d, silu, clg__net_input(net, i), l->param[0],
                                    l->bias ? l->param[1] : NULL, residual, &l->y_n,
                                    train ? &l->keep : NULL);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *dy = clg__net_output_grad(net, i);
    clg_status st = clg__conv2d_backward_weights_keep(net->ctx, &l->conv, clg__net_input(net, i),
                                                      dy, l->grad[0], l->bias ? l->grad[1] : NULL,
                                                      &l->keep);
    if (st == CLG_OK && clg__net_needs_dx(net, i, 0))
        st = clg__conv2d_backward_data_keep(net->ctx, &l->conv, dy, l->param[0], &l->dx_n[0],
                                            &l->keep);
    return st;
}

static double flops(const clg__layer *l)
{
    double macs = (double)clg_shape_numel(l->out) * (double)(l->in.c / (size_t)l->conv.groups) *
                  (double)(l->kernel_h * l->kernel_w);
    return 2.0 * macs + (l->bias ? (double)clg_shape_numel(l->out) : 0.0);
}

static const char *const keywords[] = {"conv", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const clg_conv2d_desc *d = &l->conv;
    char *w = clg__onnx_name(ex, l->name, ".weight");
    char *b = l->bias ? clg__onnx_name(ex, l->name, ".bias") : NULL;
    int64_t dims[4] = {(int64_t)l->filters, (int64_t)(l->in.c / (size_t)d->groups),
                       (int64_t)l->kernel_h, (int64_t)l->kernel_w};
    clg__onnx_initializer(ex, w, l->param[0], NULL, dims, 4);
    if (b)
        clg__onnx_initializer(ex, b, l->param[1], NULL, dims, 1);
    Onnx__NodeProto *n = clg__onnx_node(ex, "Conv", l->name, clg__onnx_input(ex, i, 0), w, b);
    int64_t ks[2] = {(int64_t)l->kernel_h, (int64_t)l->kernel_w};
    int64_t st[2] = {d->stride_h, d->stride_w}, dil[2] = {d->dilation_h, d->dilation_w};
    int64_t pads[4] = {d->pad_top, d->pad_left, d->pad_bottom, d->pad_right};
    clg__onnx_attr_ints(ex, n, "kernel_shape", ks, 2);
    clg__onnx_attr_ints(ex, n, "strides", st, 2);
    clg__onnx_attr_ints(ex, n, "dilations", dil, 2);
    clg__onnx_attr_ints(ex, n, "pads", pads, 4);
    clg__onnx_attr_int(ex, n, "group", d->groups);
}

static void resolve_same(clg__layer *l)
{
    int pad[4];
    const clg_conv2d_desc *c = &l->conv;
    if (clg__layer_pad_same(l, (long[2]){(long)l->kernel_h, (long)l->kernel_w},
                            (long[2]){c->stride_h, c->stride_w},
                            (long[2]){c->dilation_h, c->dilation_w}, pad))
        l->conv.pad_top = pad[0], l->conv.pad_bottom = pad[1], l->conv.pad_left = pad[2],
        l->conv.pad_right = pad[3];
}

const clg__layer_def clg__layer_conv2d = {
    .kind = CLG_LAYER_CONV2D, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .alloc = alloc, .forward = forward, .backward = backward,
    .init = clg__layer_init_weights, .flops = flops, .resolve_same = resolve_same,
    .epilogue_relu = CLG__RELU_FORWARD, .epilogue_silu = 1, .epilogue_sum = 1,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_conv2d(clg_net *net, size_t kernel_h, size_t kernel_w, size_t filters,
                              const clg_conv2d_desc *d, int bias)
{
    clg__layer l = {.kind = CLG_LAYER_CONV2D, .kernel_h = kernel_h, .kernel_w = kernel_w,
                    .filters = filters, .bias = bias != 0,
                    .conv = d ? *d : clg_conv2d_desc_default()};
    return clg__net_append(net, &l, "clg_net_add_conv2d");
}
