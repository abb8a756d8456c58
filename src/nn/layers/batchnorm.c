/* Layer entry: batch normalisation per channel ("batchnorm momentum=0.1 eps=1e-05"). */
#include <stdio.h>

#include "clgrad/norm.h"
#include "ops/norm_internal.h"
#include "nn/layer_table.h"

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
    int relu = 0;
    if (l->plan.sum_fused) { /* write the residual sum (and its ReLU) in one pass */
        clg__layer *add = &net->layers[i + 1];
        residual = clg__net_input_k(net, i + 1, 1);
        relu = add->relu;
        l->y_n = add->y_n; /* the add alone reads it: what it would see is the sum's input */
    } else {
        relu = l->plan.relu_fused;
    }
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
    /* with a fused ReLU, its backward pass left the gradient of its output as is: masked here */
    const clg_tensor *relu_y = l->plan.relu_masked ? &l->y_n : NULL;
    return clg__batchnorm_backward_relu(net->ctx, clg__net_input(net, i),
                                        clg__net_output_grad(net, i), relu_y, l->param[0],
                                        l->saved[0], l->saved[1], &l->dx_n[0], l->grad[0],
                                        l->grad[1]);
}

static double flops(const clg__layer *l)
{
    return 2.0 * (double)clg_shape_numel(l->in); /* inference: a scale and a shift */
}

static const char *const keywords[] = {"batchnorm", NULL};

const clg__layer_def clg__layer_batchnorm = {
    .kind = CLG_LAYER_BATCHNORM, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .alloc = alloc, .forward = forward, .backward = backward, .init = init,
    .flops = flops, .init_transparent = 1,
    .epilogue_relu = CLG__RELU_MASKED, .epilogue_sum = 1, .dx_always = 1,
};
