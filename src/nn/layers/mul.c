/* Layer entry: elementwise product of two inputs ("mul gate" multiplies the previous layer's
 * output by gate's), of one shape, or one of them C x 1 x 1 and spread over the other's
 * H x W: the gate of a squeeze-and-excitation block. */
#include <stdio.h>

#include "clgrad/activation.h"
#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    return clg__layer_options(p, tok, ntok, 1, l, clg__layer_no_option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)l;
    clg__text_put(o, "mul%s%s", inputs[0] ? " " : "", inputs);
}

/* The input that is a gate (C x 1 x 1 against the other's larger planes), or -1: one shape. */
static int gate_input(const clg__layer *l)
{
    const clg_shape *a = &l->ins[0], *b = &l->ins[1];
    if (a->h * a->w == b->h * b->w)
        return -1;
    return a->h * a->w == 1 ? 0 : 1;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    if (l->nin != 2) {
        snprintf(why, cap, "%zu inputs: a product takes two", l->nin);
        return CLG_ERR_SHAPE;
    }
    const clg_shape *a = &l->ins[0], *b = &l->ins[1];
    int gate = gate_input(l);
    const clg_shape *big = gate == 0 ? b : a, *small = gate == 0 ? a : b;
    if (big->c != small->c ||
        (gate < 0 ? big->h != small->h || big->w != small->w : small->h * small->w != 1)) {
        snprintf(why, cap, "inputs %zux%zux%zu and %zux%zux%zu (CxHxW): a product takes two "
                 "inputs of one shape, or one of Cx1x1 (a gate)", a->c, a->h, a->w, b->c, b->h,
                 b->w);
        return CLG_ERR_SHAPE;
    }
    *out = *big;
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    int g = gate_input(l) == 0;
    return clg_mul_forward(net->ctx, clg__net_input_k(net, i, g), clg__net_input_k(net, i, !g),
                           &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    int g = gate_input(l) == 0; /* the larger (or first) input's index is g, the other's !g */
    clg_tensor *dx_big = clg__net_needs_dx(net, i, (size_t)g) ? &l->dx_n[g] : NULL;
    clg_tensor *dx_small = clg__net_needs_dx(net, i, (size_t)!g) ? &l->dx_n[!g] : NULL;
    if (!dx_big && !dx_small)
        return CLG_OK;
    return clg_mul_backward(net->ctx, clg__net_input_k(net, i, g), clg__net_input_k(net, i, !g),
                            clg__net_output_grad(net, i), dx_big, dx_small);
}

static double flops(const clg__layer *l)
{
    return (double)clg_shape_numel(l->out);
}

static const char *const keywords[] = {"mul", NULL};

/* ONNX's Mul broadcasts a N x C x 1 x 1 gate over H x W as clgrad does. */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    clg__onnx_node(ex, "Mul", l->name, clg__onnx_input(ex, i, 0), clg__onnx_input(ex, i, 1), NULL);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_mul = {
    .kind = CLG_LAYER_MUL, .keywords = keywords, .parse = parse, .format = format,
    .infer = infer, .forward = forward, .backward = backward, .flops = flops, .multi_input = 1,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_mul(clg_net *net, const char *const *names, size_t n)
{
    clg__layer l = {.kind = CLG_LAYER_MUL};
    clg_status st = clg__net_find_inputs(net, names, n, &l, "clg_net_add_mul");
    if (st == CLG_OK && l.nin != 2)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_add_mul: %zu inputs; a product "
                         "takes two (the previous layer's output and one named)", l.nin);
    return st == CLG_OK ? clg__net_append(net, &l, "clg_net_add_mul") : st;
}
