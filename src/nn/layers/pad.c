/* Layer entry: spatial padding ("pad 1", "pad 1,2" (rows, columns), "pad 1,1,2,0" (top,
 * bottom, left, right; a constant pad below 0 as "-1" crops) with mode=constant|reflect|edge
 * and value=V). ONNX's Pad over H and W; a zero Pad before a convolution is folded into the
 * convolution's padding on import. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static const char *const modes[] = {"constant", "reflect", "edge"};

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (clg__option_is(o, "mode")) {
        for (int m = CLG_PAD_CONSTANT; m <= CLG_PAD_EDGE; m++)
            if (o->vlen == strlen(modes[m]) && !strncmp(o->v, modes[m], o->vlen)) {
                l->padding.mode = (clg_pad_mode)m;
                return CLG_OK;
            }
        return clg__option_bad(p, o, "constant, reflect or edge");
    }
    if (clg__option_is(o, "value"))
        return clg__option_float(p, o, &l->padding.value);
    return clg__option_unknown(p, o, "pad", "mode, value");
}

/* 1, 2 or 4 integers, each may be negative: "-1,2" */
static int signed_ints(const char *s, size_t len, long *out)
{
    int n = 0;
    for (size_t i = 0; i < len && n < 4;) {
        size_t end = i;
        while (end < len && s[end] != ',')
            end++;
        int neg = s[i] == '-';
        long v;
        if (end - i - (size_t)neg == 0 || clg__text_ints(s + i + neg, end - i - (size_t)neg, ',', &v, 1) != 1)
            return 0;
        out[n++] = neg ? -v : v;
        if (end < len && end + 1 == len)
            return 0;
        i = end + 1;
    }
    return n;
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long v[4];
    int n = ntok > 1 ? signed_ints(tok[1].s, tok[1].len, v) : 0;
    if (n != 1 && n != 2 && n != 4)
        return clg__text_error(p, ntok > 1 ? &tok[1] : &tok[0], CLG_ERR_INVALID_ARG,
                               "expected pad P, pad ROWS,COLUMNS or pad TOP,BOTTOM,LEFT,RIGHT");
    long t = v[0], b = n == 4 ? v[1] : v[0], lf = n == 1 ? v[0] : n == 2 ? v[1] : v[2];
    long r = n == 1 ? v[0] : n == 2 ? v[1] : v[3];
    l->padding = clg_pad2d_desc_default();
    l->padding.top = (int)t, l->padding.bottom = (int)b, l->padding.left = (int)lf;
    l->padding.right = (int)r;
    return clg__layer_options(p, tok, ntok, 2, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    const clg_pad2d_desc *d = &l->padding;
    clg__text_put(o, "pad %d,%d,%d,%d", d->top, d->bottom, d->left, d->right);
    if (d->mode != CLG_PAD_CONSTANT)
        clg__text_put(o, " mode=%s", modes[d->mode]);
    if (d->value != 0.0f)
        clg__text_float_option(o, "value", d->value);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    const clg_pad2d_desc *d = &l->padding;
    if ((unsigned)d->mode > CLG_PAD_EDGE ||
        (d->mode != CLG_PAD_CONSTANT && (d->top < 0 || d->bottom < 0 || d->left < 0 || d->right < 0))) {
        snprintf(why, cap, "a mode other than constant, reflect or edge, or negative pads outside "
                 "the constant mode");
        return CLG_ERR_INVALID_ARG;
    }
    return CLG_OK;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    if (clg_pad2d_output_shape(&l->padding, l->in, out) == CLG_OK)
        return CLG_OK;
    snprintf(why, cap, "%s", clg_last_error());
    return CLG_ERR_SHAPE;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    return clg_pad2d_forward(net->ctx, &l->padding, clg__net_input(net, i), &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    return clg_pad2d_backward(net->ctx, &l->padding, clg__net_output_grad(net, i), &l->dx_n[0]);
}

static double flops(const clg__layer *l)
{
    (void)l;
    return 0.0; /* a copy */
}

static const char *const keywords[] = {"pad", NULL};

/* Pad (opset 11 on: pads and the constant as inputs), pads over all four axes. */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const clg_pad2d_desc *d = &l->padding;
    const char *pads = clg__onnx_name(ex, l->name, ".pads");
    const char *value = clg__onnx_name(ex, l->name, ".value");
    const int64_t v[8] = {0, 0, d->top, d->left, 0, 0, d->bottom, d->right}, eight = 8;
    if (!pads || !value)
        return;
    clg__onnx_initializer_i64(ex, pads, v, &eight, 1);
    clg__onnx_initializer(ex, value, NULL, &d->value, NULL, 0);
    Onnx__NodeProto *n = clg__onnx_node(ex, "Pad", l->name, clg__onnx_input(ex, i, 0), pads,
                                        d->mode == CLG_PAD_CONSTANT ? value : NULL);
    clg__onnx_attr_string(ex, n, "mode", modes[d->mode]);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_pad = {
    .kind = CLG_LAYER_PAD, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .forward = forward, .backward = backward, .flops = flops,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_pad(clg_net *net, const clg_pad2d_desc *d)
{
    if (!d)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_add_pad: d must not be NULL");
    clg__layer l = {.kind = CLG_LAYER_PAD, .padding = *d};
    return clg__net_append(net, &l, "clg_net_add_pad");
}
