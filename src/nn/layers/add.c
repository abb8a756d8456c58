/* Layer entry: elementwise sum of two or more same-shaped inputs, optionally with a ReLU
 * ("add r1" sums the previous layer's output and r1's; "add a,b relu=1"). */
#include <stdio.h>

#include "clgrad/activation.h"
#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (clg__option_is(o, "relu"))
        return clg__option_flag(p, o, &l->relu);
    return clg__option_unknown(p, o, "add", "relu");
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    return clg__layer_options(p, tok, ntok, 1, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    clg__text_put(o, "add%s%s%s", inputs[0] ? " " : "", inputs, l->relu ? " relu=1" : "");
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    for (size_t k = 1; k < l->nin; k++)
        if (!clg__shape_equal(l->ins[k], l->ins[0])) {
            snprintf(why, cap, "input %zu is %zux%zux%zu, input 1 %zux%zux%zu (CxHxW): the sum "
                     "needs one shape", k + 1, l->ins[k].c, l->ins[k].h, l->ins[k].w,
                     l->ins[0].c, l->ins[0].h, l->ins[0].w);
            return CLG_ERR_SHAPE;
        }
    *out = l->ins[0];
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    clg_status st = CLG_OK;
    if (l->plan.sum_written)
        return CLG_OK; /* the batch norm before wrote the sum */
    for (size_t k = 1; k < l->nin && st == CLG_OK; k++) /* in input order: reproducible */
        st = clg__tensor_add(net->ctx, k == 1 ? clg__net_input_k(net, i, 0) : &l->y_n,
                             clg__net_input_k(net, i, k), &l->y_n, l->relu && k + 1 == l->nin);
    return st;
}

/* Every input's gradient is the output's (through the ReLU's mask): views, no copies. The
 * output's gradient is gathered here, so that with a ReLU the readers' sum is masked as it is
 * added (one pass, not a sum and then a mask). */
static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_status st = l->relu ? clg__net_gather_relu(net, i, &l->y_n, &l->dx_n[0])
                            : clg__net_gather_dy(net, i);
    clg_tensor g = l->relu ? l->dx_n[0] : l->dy_n;
    for (size_t k = 0; k < l->nin; k++)
        l->dx_n[k] = g;
    return st;
}

static double flops(const clg__layer *l)
{
    return (double)clg_shape_numel(l->out) * (double)(l->nin - 1 + (l->relu != 0));
}

/* With a ReLU the first input's gradient is the masked sum, in a buffer; without one every
 * input's gradient is a view of the output's. */
static int owns_input_grad(const clg__layer *l, size_t k)
{
    return l->relu && k == 0;
}

static int relu_family(const clg__layer *l)
{
    return l->relu;
}

static const char *const keywords[] = {"add", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const char *sum = l->relu ? clg__onnx_name(ex, l->name, ".sum") : l->name;
    Onnx__NodeProto *n = clg__onnx_node(ex, l->nin == 2 ? "Add" : "Sum", sum,
                                        clg__onnx_input(ex, i, 0), clg__onnx_input(ex, i, 1),
                                        NULL);
    if (l->nin > 2)
        clg__onnx_all_inputs(ex, n, i);
    if (l->relu)
        clg__onnx_node(ex, "Relu", l->name, sum, NULL, NULL);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_add = {
    .kind = CLG_LAYER_ADD, .keywords = keywords, .parse = parse, .format = format,
    .infer = infer, .forward = forward, .backward = backward, .flops = flops, .multi_input = 1,
    .gathers_dy = 1, .is_sum = 1, .owns_input_grad = owns_input_grad,
    .init_transparent = 1, /* a sum passes on what follows it, or applies its own ReLU */
    .relu_family = relu_family,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_add(clg_net *net, const char *const *names, size_t n, int relu)
{
    clg__layer l = {.kind = CLG_LAYER_ADD, .relu = relu != 0};
    clg_status st = clg__net_find_inputs(net, names, n, &l, "clg_net_add_add");
    return st == CLG_OK ? clg__net_append(net, &l, "clg_net_add_add") : st;
}
