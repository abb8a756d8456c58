/* Layer entry: element-wise activations ("relu", "leaky alpha=0.01", "elu alpha=1",
 * "sigmoid", "tanh"). */
#include <stdio.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

/* In clg_activation order. */
static const char *const keywords[] = {"relu", "leaky", "elu", "sigmoid", "tanh", NULL};

static int has_alpha(clg_activation f)
{
    return f == CLG_ACT_LEAKY_RELU || f == CLG_ACT_ELU;
}

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (has_alpha(l->act) && clg__option_is(o, "alpha"))
        return clg__option_float(p, o, &l->alpha);
    return clg__option_unknown(p, o, keywords[l->act], NULL);
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    for (int f = CLG_ACT_RELU; f <= CLG_ACT_TANH; f++)
        if (clg__token_is(&tok[0], keywords[f]))
            l->act = (clg_activation)f;
    l->alpha = l->act == CLG_ACT_ELU ? 1.0f : 0.01f;
    return clg__layer_options(p, tok, ntok, 1, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "%s", keywords[l->act]);
    if (has_alpha(l->act))
        clg__text_float_option(o, "alpha", l->alpha);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->act >= CLG_ACT_RELU && l->act <= CLG_ACT_TANH)
        return CLG_OK;
    snprintf(why, cap, "unknown activation %d", (int)l->act);
    return CLG_ERR_INVALID_ARG;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *x = clg__net_input(net, i);
    if (l->plan.relu_applied) {
        l->y_n = *x; /* applied by the layer before (a convolution or batch norm) */
        return CLG_OK;
    }
    return clg_activation_forward(net->ctx, l->act, l->alpha, x, &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *dy = clg__net_output_grad(net, i);
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    if (l->plan.dx_given) {
        /* the pooling layer gave the gradient of the ReLU's input; or the batch norm masks */
        l->dx_n[0] = *dy;
        return CLG_OK;
    }
    return clg_activation_backward(net->ctx, l->act, l->alpha, clg__net_input(net, i), &l->y_n,
                                   dy, &l->dx_n[0]);
}

static double flops(const clg__layer *l)
{
    return (double)clg_shape_numel(l->in);
}

static int is_relu(const clg__layer *l)
{
    return l->act == CLG_ACT_RELU;
}

static int relu_family(const clg__layer *l)
{
    return l->act == CLG_ACT_RELU || l->act == CLG_ACT_LEAKY_RELU || l->act == CLG_ACT_ELU;
}

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    static const char *const op[] = {"Relu", "LeakyRelu", "Elu", "Sigmoid", "Tanh"};
    Onnx__NodeProto *n =
        clg__onnx_node(ex, op[l->act], l->name, clg__onnx_input(ex, i, 0), NULL, NULL);
    if (l->act == CLG_ACT_LEAKY_RELU || l->act == CLG_ACT_ELU)
        clg__onnx_attr_float(ex, n, "alpha", l->alpha);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_activation = {
    .kind = CLG_LAYER_ACTIVATION, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .forward = forward, .backward = backward, .flops = flops,
    .is_relu = is_relu, .relu_family = relu_family,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_activation(clg_net *net, clg_activation f, float alpha)
{
    clg__layer l = {.kind = CLG_LAYER_ACTIVATION, .act = f, .alpha = alpha};
    return clg__net_append(net, &l, "clg_net_add_activation");
}
