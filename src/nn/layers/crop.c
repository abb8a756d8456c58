/* Layer entry: a centre crop to another layer's size ("crop ref" crops the previous layer's
 * output to ref's H x W): U-Net's skip connections, where the encoder's maps are a few pixels
 * larger than the decoder's. An odd difference leaves the extra row (column) at the bottom
 * (right). It is a constant pad with negative pads, run by the pad kernels; the reference
 * gives only its size (a zero gradient). ONNX: a Slice over H and W. */
#include <stdio.h>

#include "clgrad/pad.h"
#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    return clg__layer_options(p, tok, ntok, 1, l, clg__layer_no_option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)l;
    clg__text_put(o, "crop%s%s", inputs[0] ? " " : "", inputs);
}

/* The negative pads that take the centre of input 0 at input 1's size. */
static clg_pad2d_desc window(const clg__layer *l)
{
    const clg_shape *a = &l->ins[0], *b = &l->ins[1];
    clg_pad2d_desc d = clg_pad2d_desc_default();
    size_t dh = a->h - b->h, dw = a->w - b->w;
    d.top = -(int)(dh / 2), d.bottom = -(int)(dh - dh / 2);
    d.left = -(int)(dw / 2), d.right = -(int)(dw - dw / 2);
    return d;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    const clg_shape *a = &l->ins[0], *b = &l->ins[1];
    if (l->nin != 2 || b->h > a->h || b->w > a->w) {
        snprintf(why, cap, "a crop of %zux%zu to %zux%zu: it takes two inputs, the second no "
                 "larger than the first", a->h, a->w, l->nin == 2 ? b->h : 0,
                 l->nin == 2 ? b->w : 0);
        return CLG_ERR_SHAPE;
    }
    *out = (clg_shape){1, a->c, b->h, b->w};
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    clg_pad2d_desc d = window(l);
    return clg_pad2d_forward(net->ctx, &d, clg__net_input(net, i), &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_pad2d_desc d = window(l);
    clg_status st = CLG_OK;
    if (clg__net_needs_dx(net, i, 0))
        st = clg_pad2d_backward(net->ctx, &d, clg__net_output_grad(net, i), &l->dx_n[0]);
    if (st == CLG_OK && clg__net_needs_dx(net, i, 1)) /* only its size was read */
        st = clg_tensor_fill(&l->dx_n[1], 0.0f);
    return st;
}

static double flops(const clg__layer *l)
{
    (void)l;
    return 0.0; /* a copy */
}

static const char *const keywords[] = {"crop", NULL};

/* Slice over axes 2 and 3 (the reference's size is fixed once exported). */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    clg_pad2d_desc d = window(l);
    const char *k[3] = {clg__onnx_name(ex, l->name, ".starts"), clg__onnx_name(ex, l->name, ".ends"),
                        clg__onnx_name(ex, l->name, ".axes")};
    const int64_t v[3][2] = {{-d.top, -d.left},
                             {-d.top + (int64_t)l->out.h, -d.left + (int64_t)l->out.w},
                             {2, 3}},
                  two = 2;
    for (int j = 0; j < 3; j++)
        if (k[j])
            clg__onnx_initializer_i64(ex, k[j], v[j], &two, 1);
    Onnx__NodeProto *n = clg__onnx_node(ex, "Slice", l->name, clg__onnx_input(ex, i, 0), k[0], k[1]);
    clg__onnx_more_input(ex, n, k[2]);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_crop = {
    .kind = CLG_LAYER_CROP, .keywords = keywords, .parse = parse, .format = format,
    .infer = infer, .forward = forward, .backward = backward, .flops = flops, .multi_input = 1,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_crop(clg_net *net, const char *reference)
{
    clg__layer l = {.kind = CLG_LAYER_CROP};
    const char *names[1] = {reference};
    clg_status st = clg__net_find_inputs(net, reference ? names : NULL, reference ? 1 : 0, &l,
                                         "clg_net_add_crop");
    if (st == CLG_OK && l.nin != 2)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_add_crop: name the layer whose "
                         "size to crop to");
    return st == CLG_OK ? clg__net_append(net, &l, "clg_net_add_crop") : st;
}
