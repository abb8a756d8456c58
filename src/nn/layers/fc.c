/* Layer entry: fully connected with a bias, flattening its input ("fc 10"). */
#include <stdio.h>

#include "clgrad/fc.h"
#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long units = 0;
    if (ntok < 2)
        return clg__text_error(p, &tok[0], CLG_ERR_INVALID_ARG, "fc needs an argument: fc UNITS");
    if (clg__text_too_large(tok[1].s, tok[1].len, ','))
        return clg__text_error(p, &tok[1], CLG_ERR_INVALID_ARG, "%.*s units: too large (a layer "
                               "takes at most %ld)", (int)tok[1].len, tok[1].s, CLG__TEXT_MAX_INT);
    if (clg__text_ints(tok[1].s, tok[1].len, ',', &units, 1) != 1 || units < 1)
        return clg__text_error(p, &tok[1], CLG_ERR_INVALID_ARG,
                               "expected a unit count >= 1, found \"%.*s\"", (int)tok[1].len,
                               tok[1].s);
    l->outputs = (size_t)units;
    return clg__layer_options(p, tok, ntok, 2, l, clg__layer_no_option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "fc %zu", l->outputs);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->outputs)
        return CLG_OK;
    snprintf(why, cap, "outputs must be > 0");
    return CLG_ERR_INVALID_ARG;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    (void)why, (void)cap;
    *out = (clg_shape){1, l->outputs, 1, 1};
    return CLG_OK;
}

static clg_status alloc(clg_net *net, clg__layer *l)
{
    l->nparams = 2;
    l->decay[0] = 1;
    clg_status st = clg__layer_tensor(net, (clg_shape){l->outputs, clg_shape_numel(l->in), 1, 1},
                                      0.0f, &l->param[0]);
    if (st == CLG_OK)
        st = clg__layer_tensor(net, (clg_shape){1, l->outputs, 1, 1}, 0.0f, &l->param[1]);
    return st;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    return clg_fc_forward(net->ctx, clg__net_input(net, i), l->param[0], l->param[1], &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *dy = clg__net_output_grad(net, i);
    clg_status st = clg_fc_backward_weights(net->ctx, clg__net_input(net, i), dy, l->grad[0]);
    if (st == CLG_OK)
        st = clg_bias_backward(net->ctx, dy, l->grad[1]);
    if (st == CLG_OK && clg__net_needs_dx(net, i, 0))
        st = clg_fc_backward_data(net->ctx, dy, l->param[0], &l->dx_n[0]);
    return st;
}

static double flops(const clg__layer *l)
{
    return (2.0 * (double)clg_shape_numel(l->in) + 1.0) * (double)l->outputs;
}

static const char *const keywords[] = {"fc", NULL};

/* fc: Flatten (a 4-D input) then Gemm with the weights as stored (M x K, transB). */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const char *x = clg__onnx_flat_input(ex, i);
    char *w = clg__onnx_name(ex, l->name, ".weight"), *b = clg__onnx_name(ex, l->name, ".bias");
    int64_t dims[2] = {(int64_t)l->outputs, (int64_t)clg_shape_numel(l->in)};
    clg__onnx_initializer(ex, w, l->param[0], NULL, dims, 2);
    clg__onnx_initializer(ex, b, l->param[1], NULL, dims, 1);
    Onnx__NodeProto *n = clg__onnx_node(ex, "Gemm", l->name, x, w, b);
    clg__onnx_attr_int(ex, n, "transB", 1);
    clg__onnx_set_rank2(ex, i);
}

const clg__layer_def clg__layer_fc = {
    .kind = CLG_LAYER_FC, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .alloc = alloc, .forward = forward, .backward = backward,
    .init = clg__layer_init_weights, .flops = flops, .resizable_output = 1,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_fc(clg_net *net, size_t outputs)
{
    clg__layer l = {.kind = CLG_LAYER_FC, .outputs = outputs};
    return clg__net_append(net, &l, "clg_net_add_fc");
}
