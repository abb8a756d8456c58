/* Layer entry: dropout, active in training only ("dropout 0.5" or "dropout p=0.5"). */
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (clg__option_is(o, "p"))
        return clg__option_float(p, o, &l->p);
    return clg__option_unknown(p, o, "dropout", NULL);
}

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    size_t first = 1;
    l->p = 0.5f;
    if (ntok > 1 && !memchr(tok[1].s, '=', tok[1].len)) {
        if (!clg__text_float(tok[1].s, tok[1].len, &l->p))
            return clg__text_error(p, &tok[1], CLG_ERR_INVALID_ARG,
                                   "expected a probability, found \"%.*s\"", (int)tok[1].len,
                                   tok[1].s);
        first = 2;
    }
    return clg__layer_options(p, tok, ntok, first, l, option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "dropout ");
    clg__text_float_option(o, "", l->p);
}

static clg_status check(const clg__layer *l, char *why, size_t cap)
{
    if (l->p >= 0.0f && l->p < 1.0f)
        return CLG_OK;
    snprintf(why, cap, "p %g must be in [0, 1)", (double)l->p);
    return CLG_ERR_INVALID_ARG;
}

static uint64_t mask_offset(const clg_net *net, const clg__layer *l)
{
    return net->shard_first * clg_shape_numel(l->in);
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    clg__layer *l = &net->layers[i];
    clg_tensor *x = clg__net_input(net, i);
    if (train && l->p > 0.0f) {
        l->y_n = clg__net_view(l->y, net->n);
        return clg__dropout(net->ctx, 0, l->p, clg__net_dropout_seed(net, i), step,
                            mask_offset(net, l), x, &l->y_n);
    }
    l->y_n = *x; /* the identity: the next layer reads the input itself, no copy */
    return CLG_OK;
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    clg__layer *l = &net->layers[i];
    clg_tensor *dy = clg__net_output_grad(net, i);
    if (!clg__net_needs_dx(net, i, 0))
        return CLG_OK;
    if (l->p > 0.0f)
        return clg__dropout(net->ctx, 1, l->p, clg__net_dropout_seed(net, i), step,
                            mask_offset(net, l), dy, &l->dx_n[0]);
    return clg_tensor_copy(&l->dx_n[0], dy);
}

static double flops(const clg__layer *l)
{
    (void)l;
    return 0.0; /* the identity in inference */
}

static const char *const keywords[] = {"dropout", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    char *ratio = clg__onnx_name(ex, l->name, ".ratio");
    clg__onnx_initializer(ex, ratio, NULL, &l->p, NULL, 0);
    clg__onnx_node(ex, "Dropout", l->name, clg__onnx_input(ex, i, 0), ratio, NULL);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_dropout = {
    .kind = CLG_LAYER_DROPOUT, .keywords = keywords, .parse = parse, .format = format,
    .check = check, .forward = forward, .backward = backward, .flops = flops,
    .init_transparent = 1, .view = CLG__VIEW_INFER, /* the identity at inference */
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_dropout(clg_net *net, float p)
{
    clg__layer l = {.kind = CLG_LAYER_DROPOUT, .p = p};
    return clg__net_append(net, &l, "clg_net_add_dropout");
}
