/* Layer entry: ShuffleNet's channel shuffle ("shuffle 2"): the channels as groups x (C /
 * groups), transposed: output channel c is input channel (c % groups) * (C / groups) +
 * c / groups. Its backward pass is the shuffle with C / groups groups, which undoes it. */
#include <stdio.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    long g;
    if (ntok < 2 || clg__text_ints(tok[1].s, tok[1].len, ',', &g, 1) != 1 || g < 1)
        return clg__text_error(p, ntok > 1 ? &tok[1] : &tok[0], CLG_ERR_INVALID_ARG,
                               "expected shuffle GROUPS (at least 1)");
    l->groups = (size_t)g;
    return clg__layer_options(p, tok, ntok, 2, l, clg__layer_no_option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "shuffle %zu", l->groups);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->groups >= 1)
        return CLG_OK;
    snprintf(why, cap, "%zu groups", l->groups);
    return CLG_ERR_INVALID_ARG;
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    if (l->in.c % l->groups) {
        snprintf(why, cap, "%zu channels in %zu groups: the groups must divide them", l->in.c,
                 l->groups);
        return CLG_ERR_SHAPE;
    }
    *out = l->in;
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    return clg__tensor_shuffle(net->ctx, clg__net_input(net, i), &l->y_n, l->groups);
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    return clg__tensor_shuffle(net->ctx, clg__net_output_grad(net, i), &l->dx_n[0],
                               l->in.c / l->groups);
}

static double flops(const clg__layer *l)
{
    (void)l;
    return 0.0; /* a copy */
}

static const char *const keywords[] = {"shuffle", NULL};

/* As PyTorch writes it: Reshape to N x groups x C/groups x H x W, Transpose the two channel
 * axes, Reshape back (0: N as it is). */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    const char *five = clg__onnx_name(ex, l->name, ".groups"), *four = clg__onnx_name(ex, l->name, ".shape");
    const char *split = clg__onnx_name(ex, l->name, ".split"), *t = clg__onnx_name(ex, l->name, ".t");
    const int64_t g[5] = {0, (int64_t)l->groups, (int64_t)(l->in.c / l->groups), (int64_t)l->in.h,
                          (int64_t)l->in.w},
                  back[4] = {0, (int64_t)l->in.c, (int64_t)l->in.h, (int64_t)l->in.w}, d5 = 5, d4 = 4;
    const int64_t perm[5] = {0, 2, 1, 3, 4};
    if (!five || !four || !split || !t)
        return;
    clg__onnx_initializer_i64(ex, five, g, &d5, 1);
    clg__onnx_initializer_i64(ex, four, back, &d4, 1);
    clg__onnx_node(ex, "Reshape", split, clg__onnx_input(ex, i, 0), five, NULL);
    clg__onnx_attr_ints(ex, clg__onnx_node(ex, "Transpose", t, split, NULL, NULL), "perm", perm, 5);
    clg__onnx_node(ex, "Reshape", l->name, t, four, NULL);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_shuffle = {
    .kind = CLG_LAYER_SHUFFLE, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .infer = infer, .forward = forward, .backward = backward, .flops = flops,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_channel_shuffle(clg_net *net, size_t groups)
{
    clg__layer l = {.kind = CLG_LAYER_SHUFFLE, .groups = groups};
    return clg__net_append(net, &l, "clg_net_add_channel_shuffle");
}
