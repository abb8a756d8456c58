/* Layer entry: batch normalisation per channel ("batchnorm momentum=0.1 eps=1e-05"). */
#include <stdio.h>
#include <string.h>

#include "clgrad/norm.h"
#include "ops/norm_internal.h"
#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (clg__option_is(o, "momentum"))
        return clg__option_float(p, o, &l->momentum);
    if (clg__option_is(o, "eps"))
        return clg__option_float(p, o, &l->eps);
    return clg__option_unknown(p, o, "batchnorm", NULL);
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    l->momentum = 0.1f;
    l->eps = 1e-5f;
    return clg__layer_options(p, tok, ntok, 1, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "batchnorm");
    clg__text_float_option(o, "momentum", l->momentum);
    clg__text_float_option(o, "eps", l->eps);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->momentum > 0.0f && l->momentum <= 1.0f && l->eps > 0.0f)
        return CLG_OK;
    snprintf(why, cap, "momentum %g must be in (0, 1] and eps %g > 0", (double)l->momentum,
             (double)l->eps);
    return CLG_ERR_INVALID_ARG;
}

static clg_status alloc(clg_net *net, clg__layer *l)
{
    clg_shape s = {1, l->in.c, 1, 1};
    clg_status st = CLG_OK;
    l->nparams = 2;
    for (int i = 0; st == CLG_OK && i < 2; i++) { /* scale 1, shift 0; mean 0, variance 1 */
        st = clg__layer_tensor(net, s, i ? 0.0f : 1.0f, &l->param[i]);
        if (st == CLG_OK)
            st = clg__layer_tensor(net, s, i ? 1.0f : 0.0f, &l->state[i]);
        if (st == CLG_OK)
            st = clg__layer_tensor(net, s, 0.0f, &l->saved[i]);
    }
    return st;
}

static clg_status init(clg_net *net, size_t i, uint64_t seed)
{
    (void)seed;
    clg__layer *l = &net->layers[i];
    clg_status st = clg_tensor_fill(l->param[0], 1.0f);
    if (st == CLG_OK)
        st = clg_tensor_fill(l->param[1], 0.0f);
    if (st == CLG_OK)
        st = clg_tensor_fill(l->state[0], 0.0f);
    if (st == CLG_OK)
        st = clg_tensor_fill(l->state[1], 1.0f);
    return st;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_tensor *x = clg__net_input(net, i), *residual = NULL;
    int relu = l->plan.relu_fused;
    if (l->plan.sum_fused) /* write the residual sum (and its ReLU) in one pass */
        residual = clg__net_fused_sum(net, i, &relu);
    if (train)
        return clg__batchnorm_train_sum(net->ctx, x, l->param[0], l->param[1], l->momentum,
                                        l->eps, l->state[0], l->state[1], l->saved[0],
                                        l->saved[1], residual, relu, &l->y_n);
    return clg__batchnorm_infer_sum(net->ctx, x, l->param[0], l->param[1], l->state[0],
                                    l->state[1], l->eps, residual, relu, &l->y_n);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    /* with a fused ReLU, its backward pass left the gradient of its output as is: masked here
     * (the plan fuses a ReLU or a sum, never both: the mask is batch norm's own output's) */
    const clg_tensor *relu_beta = l->plan.relu_masked ? l->param[1] : NULL;
    return clg__batchnorm_backward_relu(net->ctx, clg__net_input(net, i),
                                        clg__net_output_grad(net, i), relu_beta, l->param[0],
                                        l->saved[0], l->saved[1], &l->dx_n[0], l->grad[0],
                                        l->grad[1]);
}

static double flops(const clg__layer *l)
{
    return 2.0 * (double)clg_shape_numel(l->in); /* inference: a scale and a shift */
}

static const char *const keywords[] = {"batchnorm", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const char *what[4] = {".scale", ".shift", ".mean", ".var"};
    char *name[4];
    int64_t c = (int64_t)l->in.c;
    for (int k = 0; k < 4; k++) {
        name[k] = clg__onnx_name(ex, l->name, what[k]);
        clg__onnx_initializer(ex, name[k], k < 2 ? l->param[k] : l->state[k - 2], NULL, &c, 1);
    }
    Onnx__NodeProto *n = clg__onnx_node(ex, "BatchNormalization", l->name,
                                        clg__onnx_input(ex, i, 0), name[0], name[1]);
    if (!n)
        return;
    char **ins = clg__onnx_own(ex, clg__calloc(5, sizeof *ins));
    if (!ins)
        return;
    memcpy(ins, n->input, 3 * sizeof *ins);
    ins[3] = name[2], ins[4] = name[3];
    n->input = ins, n->n_input = 5;
    clg__onnx_attr_float(ex, n, "epsilon", l->eps);
    /* ONNX's momentum is the running average's weight */
    clg__onnx_attr_float(ex, n, "momentum", 1.0f - l->momentum);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_batchnorm = {
    .kind = CLG_LAYER_BATCHNORM, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .alloc = alloc, .forward = forward, .backward = backward, .init = init,
    .flops = flops, .init_transparent = 1,
    .epilogue_relu = CLG__RELU_MASKED, .epilogue_sum = 1, .dx_always = 1,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_batchnorm(clg_net *net, float momentum, float eps)
{
    clg__layer l = {.kind = CLG_LAYER_BATCHNORM, .momentum = momentum, .eps = eps};
    return clg__net_append(net, &l, "clg_net_add_batchnorm");
}
