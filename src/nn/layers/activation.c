/* Layer entry: element-wise activations ("relu", "leaky alpha=0.01", "elu alpha=1",
 * "sigmoid", "tanh", "clip min=0 max=6", "hardsigmoid alpha=0.2 beta=0.5", "hardswish",
 * "silu"). Clip keeps its bounds in alpha and beta, as the device functions take them. */
#include <math.h>
#include <stdio.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

/* In clg_activation order. */
static const char *const keywords[] = {"relu", "leaky", "elu", "sigmoid", "tanh", "clip",
                                       "hardsigmoid", "hardswish", "silu", NULL};

static int has_alpha(clg_activation f)
{
    return f == CLG_ACT_LEAKY_RELU || f == CLG_ACT_ELU || f == CLG_ACT_HARD_SIGMOID;
}

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (has_alpha(l->act) && clg__option_is(o, "alpha"))
        return clg__option_float(p, o, &l->alpha);
    if (l->act == CLG_ACT_HARD_SIGMOID && clg__option_is(o, "beta"))
        return clg__option_float(p, o, &l->beta);
    if (l->act == CLG_ACT_CLIP && (clg__option_is(o, "min") || clg__option_is(o, "max")))
        return clg__option_float(p, o, clg__option_is(o, "min") ? &l->alpha : &l->beta);
    return clg__option_unknown(p, o, keywords[l->act],
                               l->act == CLG_ACT_CLIP ? "min, max"
                               : l->act == CLG_ACT_HARD_SIGMOID ? "alpha, beta"
                               : has_alpha(l->act) ? "alpha" : NULL);
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    for (int f = CLG_ACT_RELU; f <= CLG_ACT_SILU; f++)
        if (clg__token_is(&tok[0], keywords[f]))
            l->act = (clg_activation)f;
    /* defaults: ELU's 1, leaky's 0.01; ReLU6; ONNX's hard sigmoid (PyTorch's is 1/6, 1/2) */
    l->alpha = l->act == CLG_ACT_ELU ? 1.0f : l->act == CLG_ACT_CLIP ? 0.0f
             : l->act == CLG_ACT_HARD_SIGMOID ? 0.2f : 0.01f;
    l->beta = l->act == CLG_ACT_CLIP ? 6.0f : l->act == CLG_ACT_HARD_SIGMOID ? 0.5f : 0.0f;
    return clg__layer_options(p, tok, ntok, 1, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "%s", keywords[l->act]);
    if (l->act == CLG_ACT_CLIP) {
        clg__text_float_option(o, "min", l->alpha);
        clg__text_float_option(o, "max", l->beta);
    } else if (has_alpha(l->act)) {
        clg__text_float_option(o, "alpha", l->alpha);
    }
    if (l->act == CLG_ACT_HARD_SIGMOID)
        clg__text_float_option(o, "beta", l->beta);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->act > CLG_ACT_SILU || l->act < CLG_ACT_RELU) {
        snprintf(why, cap, "unknown activation %d", (int)l->act);
        return CLG_ERR_INVALID_ARG;
    }
    if (l->act == CLG_ACT_CLIP && !(l->alpha <= l->beta)) {
        snprintf(why, cap, "clip min=%g is above max=%g", (double)l->alpha, (double)l->beta);
        return CLG_ERR_INVALID_ARG;
    }
    return CLG_OK;
}

static clg_activation_desc desc(const clg__layer *l)
{
    return (clg_activation_desc){l->act, l->alpha, l->beta};
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *x = clg__net_input(net, i);
    if (l->plan.relu_applied || (l->plan.silu_applied && clg__net_infer_fusions(net, train))) {
        l->y_n = *x; /* applied (or clipped) by the layer before (a convolution or batch norm) */
        return CLG_OK;
    }
    clg_activation_desc a = desc(l);
    return clg_activation_forward_desc(net->ctx, &a, x, &l->y_n);
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
    clg_activation_desc a = desc(l);
    return clg_activation_backward_desc(net->ctx, &a, clg__net_input(net, i), &l->y_n, dy,
                                        &l->dx_n[0]);
}

static double flops(const clg__layer *l)
{
    return (double)clg_shape_numel(l->in);
}

static int is_relu(const clg__layer *l)
{
    return l->act == CLG_ACT_RELU;
}

static int is_silu(const clg__layer *l)
{
    return l->act == CLG_ACT_SILU;
}

/* Its derivative, 0 < x < M, reads the same from the clipped output: a producer may clip. */
static float capped_relu(const clg__layer *l)
{
    return l->act == CLG_ACT_CLIP && l->alpha == 0.0f && l->beta > 0.0f && l->beta < INFINITY
               ? l->beta : 0.0f;
}

/* He's initialisation suits the layers before these: zero (or near) for negative inputs. */
static int relu_family(const clg__layer *l)
{
    return l->act == CLG_ACT_RELU || l->act == CLG_ACT_LEAKY_RELU || l->act == CLG_ACT_ELU ||
           l->act == CLG_ACT_CLIP || l->act == CLG_ACT_HARD_SWISH || l->act == CLG_ACT_SILU;
}

/* Opset 13: Clip's bounds are inputs; HardSwish (opset 14) and SiLU (no operator) are the
 * HardSigmoid or Sigmoid they are times x, the pattern the importer reads back. */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    static const char *const op[] = {"Relu", "LeakyRelu", "Elu", "Sigmoid", "Tanh", "Clip",
                                     "HardSigmoid", "HardSigmoid", "Sigmoid"};
    const char *x = clg__onnx_input(ex, i, 0);
    int times_x = l->act == CLG_ACT_HARD_SWISH || l->act == CLG_ACT_SILU;
    const char *out = times_x ? clg__onnx_name(ex, l->name, ".gate") : l->name;
    const char *lo = NULL, *hi = NULL;
    if (l->act == CLG_ACT_CLIP) {
        lo = clg__onnx_name(ex, l->name, ".min"), hi = clg__onnx_name(ex, l->name, ".max");
        if (lo && hi) {
            clg__onnx_initializer(ex, lo, NULL, &l->alpha, NULL, 0);
            clg__onnx_initializer(ex, hi, NULL, &l->beta, NULL, 0);
        }
    }
    Onnx__NodeProto *n = clg__onnx_node(ex, op[l->act], out, x, lo, hi);
    if (l->act == CLG_ACT_LEAKY_RELU || l->act == CLG_ACT_ELU)
        clg__onnx_attr_float(ex, n, "alpha", l->alpha);
    if (l->act == CLG_ACT_HARD_SIGMOID || l->act == CLG_ACT_HARD_SWISH) {
        clg__onnx_attr_float(ex, n, "alpha", l->act == CLG_ACT_HARD_SWISH ? 1.0f / 6 : l->alpha);
        clg__onnx_attr_float(ex, n, "beta", l->act == CLG_ACT_HARD_SWISH ? 0.5f : l->beta);
    }
    if (times_x)
        clg__onnx_node(ex, "Mul", l->name, x, out, NULL);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_activation = {
    .kind = CLG_LAYER_ACTIVATION, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .forward = forward, .backward = backward, .flops = flops,
    .is_relu = is_relu, .capped_relu = capped_relu, .is_silu = is_silu, .relu_family = relu_family,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_activation(clg_net *net, clg_activation f, float alpha)
{
    if (f == CLG_ACT_CLIP || f == CLG_ACT_HARD_SIGMOID)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_net_add_activation: "
                         "%s takes two settings: clg_net_add_activation_desc",
                         f == CLG_ACT_CLIP ? "clip" : "hard sigmoid");
    clg_activation_desc a = {f, alpha, 0.0f};
    return clg_net_add_activation_desc(net, &a);
}

clg_status clg_net_add_activation_desc(clg_net *net, const clg_activation_desc *a)
{
    if (!a)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_add_activation_desc: a must not be NULL");
    clg__layer l = {.kind = CLG_LAYER_ACTIVATION, .act = a->f, .alpha = a->alpha, .beta = a->beta};
    return clg__net_append(net, &l, "clg_net_add_activation");
}
