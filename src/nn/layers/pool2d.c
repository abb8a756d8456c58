/* Layer entries: max and average pooling ("maxpool 2x2 stride=2 pad=0 ceil=0", "avgpool 3x3
 * exclude-pad=1") and global average pooling ("gap"). */
#include <stdio.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    clg_pool2d_desc *d = &l->pool;
    int max = d->mode == CLG_POOL_MAX, flag = 0;
    clg_status st;
    if (clg__option_is(o, "pad")) {
        int pad[4] = {0, 0, 0, 0};
        st = clg__option_pad(p, o, 1, &l->pad_same, pad);
        d->pad_top = pad[0], d->pad_bottom = pad[1], d->pad_left = pad[2], d->pad_right = pad[3];
        return st;
    }
    if (clg__option_is(o, "stride"))
        return clg__option_pair(p, o, 1, &d->stride_h, &d->stride_w);
    if (clg__option_is(o, "ceil")) {
        st = clg__option_flag(p, o, &flag);
        d->ceil_mode = flag;
        return st;
    }
    if (!max && clg__option_is(o, "exclude-pad")) {
        st = clg__option_flag(p, o, &flag);
        d->mode = flag ? CLG_POOL_AVG_EXCLUDE : CLG_POOL_AVG;
        return st;
    }
    return clg__option_unknown(p, o, max ? "maxpool" : "avgpool",
                               max ? "stride, pad, ceil" : "stride, pad, ceil, exclude-pad");
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long k[2];
    clg_status st = clg__text_sizes(p, tok, ntok, 2, "maxpool HxW [stride=..] [pad=..]", k);
    if (st != CLG_OK)
        return st;
    clg_pool2d_desc *d = &l->pool;
    *d = clg_pool2d_desc_default();
    d->mode = clg__token_is(&tok[0], "maxpool") ? CLG_POOL_MAX : CLG_POOL_AVG;
    d->window_h = d->stride_h = (int)k[0];
    d->window_w = d->stride_w = (int)k[1];
    return clg__layer_options(p, tok, ntok, 2, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    const clg_pool2d_desc *d = &l->pool;
    clg__text_put(o, "%s %dx%d", d->mode == CLG_POOL_MAX ? "maxpool" : "avgpool", d->window_h,
                  d->window_w);
    if (d->stride_h != d->window_h || d->stride_w != d->window_w)
        clg__text_pair(o, "stride", d->stride_h, d->stride_w);
    clg__text_pad(o, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right);
    if (d->ceil_mode)
        clg__text_put(o, " ceil=1");
    if (d->mode == CLG_POOL_AVG_EXCLUDE)
        clg__text_put(o, " exclude-pad=1");
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (!l->pool.relu_input)
        return CLG_OK;
    snprintf(why, cap, "d->relu_input must be 0 (the network sets it where a relu layer "
                       "precedes the pooling)");
    return CLG_ERR_INVALID_ARG;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    clg_status st = clg_pool2d_output_shape(&l->pool, l->in, out);
    if (st != CLG_OK)
        snprintf(why, cap, "%s", clg_last_error());
    return st;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    return clg_pool2d_forward(net->ctx, &l->pool, clg__net_input(net, i), &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    clg_pool2d_desc d = l->pool;
    d.relu_input = l->plan.relu_input;
    return clg_pool2d_backward(net->ctx, &d, clg__net_input(net, i), clg__net_output_grad(net, i),
                               &l->dx_n[0]);
}

static double flops(const clg__layer *l)
{
    return (double)clg_shape_numel(l->out) * (double)(l->pool.window_h * l->pool.window_w);
}

static const char *const keywords[] = {"maxpool", "avgpool", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const clg_pool2d_desc *d = &l->pool;
    const char *op = d->mode == CLG_POOL_MAX ? "MaxPool" : "AveragePool";
    Onnx__NodeProto *n = clg__onnx_node(ex, op, l->name, clg__onnx_input(ex, i, 0), NULL, NULL);
    int64_t ks[2] = {d->window_h, d->window_w}, st[2] = {d->stride_h, d->stride_w};
    int64_t pads[4] = {d->pad_top, d->pad_left, d->pad_bottom, d->pad_right};
    clg__onnx_attr_ints(ex, n, "kernel_shape", ks, 2);
    clg__onnx_attr_ints(ex, n, "strides", st, 2);
    clg__onnx_attr_ints(ex, n, "pads", pads, 4);
    clg__onnx_attr_int(ex, n, "ceil_mode", d->ceil_mode ? 1 : 0);
    if (d->mode != CLG_POOL_MAX)
        clg__onnx_attr_int(ex, n, "count_include_pad", d->mode == CLG_POOL_AVG ? 1 : 0);
}

static void resolve_same(clg__layer *l)
{
    int pad[4];
    const clg_pool2d_desc *q = &l->pool;
    if (clg__layer_pad_same(l, (long[2]){q->window_h, q->window_w},
                            (long[2]){q->stride_h, q->stride_w}, (long[2]){1, 1}, pad))
        l->pool.pad_top = pad[0], l->pool.pad_bottom = pad[1], l->pool.pad_left = pad[2],
        l->pool.pad_right = pad[3];
}

const clg__layer_def clg__layer_pool2d = {
    .kind = CLG_LAYER_POOL2D, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .forward = forward, .backward = backward, .flops = flops,
    .init_transparent = 1, .resolve_same = resolve_same, .folds_relu = 1,
    .onnx_export = export_onnx,
};

/* --- global average pooling --- */

static clg_status gap_parse(const clg__parser *p, const clg__token *tok, size_t ntok,
                            clg__layer *l)
{
    return clg__layer_options(p, tok, ntok, 1, l, clg__layer_no_option);
}

static void gap_format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    (void)l;
    clg__text_put(o, "gap");
}

static clg_status gap_infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    (void)why, (void)cap;
    *out = (clg_shape){1, l->in.c, 1, 1};
    return CLG_OK;
}

static clg_status gap_forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    return clg_global_avg_pool_forward(net->ctx, clg__net_input(net, i), &net->layers[i].y_n);
}

static clg_status gap_backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    return clg__net_needs_dx(net, i, 0) ? clg_global_avg_pool_backward(net->ctx, clg__net_output_grad(net, i),
                                            &net->layers[i].dx_n[0])
             : CLG_OK;
}

static double gap_flops(const clg__layer *l)
{
    return (double)clg_shape_numel(l->in);
}

static const char *const gap_keywords[] = {"gap", NULL};

static void gap_export_onnx(clg__onnx_out *ex, size_t i)
{
    clg__onnx_node(ex, "GlobalAveragePool", clg__onnx_layer(ex, i)->name,
                   clg__onnx_input(ex, i, 0), NULL, NULL);
}

const clg__layer_def clg__layer_global_avg_pool = {
    .kind = CLG_LAYER_GLOBAL_AVG_POOL, .keywords = gap_keywords, .parse = gap_parse,
    .format = gap_format, .infer = gap_infer, .forward = gap_forward, .backward = gap_backward,
    .flops = gap_flops,
    .onnx_export = gap_export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_pool2d(clg_net *net, const clg_pool2d_desc *d)
{
    if (net && !d)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_add_pool2d: d must not be NULL");
    clg__layer l = {.kind = CLG_LAYER_POOL2D};
    if (d)
        l.pool = *d;
    return clg__net_append(net, &l, "clg_net_add_pool2d");
}

/* The builder's call (nn.h). */
clg_status clg_net_add_global_avg_pool(clg_net *net)
{
    clg__layer l = {.kind = CLG_LAYER_GLOBAL_AVG_POOL};
    return clg__net_append(net, &l, "clg_net_add_global_avg_pool");
}
