/* Layer entry: a range of its input's channels ("slice 0:58" keeps channels 0 to 57):
 * ShuffleNet's split of a layer into two halves, ONNX's Split and Slice along the channels.
 * Its gradient is the output's, in place, with zeros in the other channels. */
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

/* "slice A:B", or "slice J/K": part J (from 0) of K, as ONNX's Split into K outputs cuts
 * (ceil(C / K) channels each, the last what is left), resolved once C is known. */
static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long r[2];
    int parts = ntok > 1 && memchr(tok[1].s, '/', tok[1].len);
    if (ntok < 2 || clg__text_ints(tok[1].s, tok[1].len, parts ? '/' : ':', r, 2) != 2 ||
        r[0] >= r[1])
        return clg__text_error(p, ntok > 1 ? &tok[1] : &tok[0], CLG_ERR_INVALID_ARG,
                               "expected slice FIRST:END (the channels FIRST to END - 1) or "
                               "slice J/K (part J of K)");
    l->c_lo = (size_t)r[0], l->c_hi = (size_t)r[1];
    l->pad_same = parts;
    return clg__layer_options(p, tok, ntok, 2, l, clg__layer_no_option);
}

static void resolve_parts(clg__layer *l)
{
    size_t chunk = (l->in.c + l->c_hi - 1) / l->c_hi, lo = l->c_lo * chunk;
    l->c_lo = lo, l->c_hi = lo + chunk < l->in.c ? lo + chunk : l->in.c;
    l->pad_same = 0;
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "slice %zu:%zu", l->c_lo, l->c_hi);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->c_lo < l->c_hi)
        return CLG_OK;
    snprintf(why, cap, "channels %zu to %zu: an empty range", l->c_lo, l->c_hi);
    return CLG_ERR_INVALID_ARG;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    if (l->c_hi > l->in.c || l->c_lo >= l->c_hi) {
        snprintf(why, cap, "channels %zu:%zu of an input of %zu", l->c_lo, l->c_hi, l->in.c);
        return CLG_ERR_SHAPE;
    }
    *out = (clg_shape){1, l->c_hi - l->c_lo, l->in.h, l->in.w};
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    return clg__tensor_stack(net->ctx, &l->y_n, clg__net_input(net, i), l->c_lo, 0);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    clg_status st = clg_tensor_fill(&l->dx_n[0], 0.0f);
    return st == CLG_OK ? clg__tensor_stack(net->ctx, clg__net_output_grad(net, i), &l->dx_n[0],
                                            l->c_lo, 1)
                        : st;
}

static double flops(const clg__layer *l)
{
    (void)l;
    return 0.0; /* a copy */
}

static const char *const keywords[] = {"slice", NULL};

/* Slice along axis 1 (opset 13: starts, ends and axes as int64 inputs). */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const char *k[3] = {clg__onnx_name(ex, l->name, ".starts"), clg__onnx_name(ex, l->name, ".ends"),
                        clg__onnx_name(ex, l->name, ".axes")};
    const int64_t v[3] = {(int64_t)l->c_lo, (int64_t)l->c_hi, 1}, one = 1;
    for (int j = 0; j < 3; j++)
        if (k[j])
            clg__onnx_initializer_i64(ex, k[j], &v[j], &one, 1);
    Onnx__NodeProto *n = clg__onnx_node(ex, "Slice", l->name, clg__onnx_input(ex, i, 0), k[0], k[1]);
    clg__onnx_more_input(ex, n, k[2]);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_slice = {
    .kind = CLG_LAYER_SLICE, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .forward = forward, .backward = backward, .flops = flops,
    .resolve_same = resolve_parts, .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_channel_slice(clg_net *net, size_t first, size_t count)
{
    clg__layer l = {.kind = CLG_LAYER_SLICE, .c_lo = first, .c_hi = first + count};
    return clg__net_append(net, &l, "clg_net_add_channel_slice");
}
