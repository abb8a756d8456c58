/* Layer entry: the output, softmax with cross-entropy loss ("softmax"); its input is the
 * logits, its gradient comes from the loss (src/nn/net_exec.c). */
#include <stdio.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    return clg__layer_options(p, tok, ntok, 1, l, clg__layer_no_option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    (void)l;
    clg__text_put(o, "softmax");
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    size_t classes = clg_shape_numel(l->in);
    if (classes < 2) {
        snprintf(why, cap, "needs at least 2 classes, its input has %zu values", classes);
        return CLG_ERR_SHAPE;
    }
    *out = l->in;
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)net, (void)i, (void)train, (void)step;
    return CLG_OK; /* the loss reads the logits */
}

static double flops(const clg__layer *l)
{
    return 3.0 * (double)clg_shape_numel(l->in); /* exp, sum, divide */
}

static const char *const keywords[] = {"softmax", NULL};

/* The output: softmax over each sample's values, as "probabilities" (N x classes). */
static void export_onnx(clg__onnx_out *ex, size_t i)
{
    Onnx__NodeProto *n =
        clg__onnx_node(ex, "Softmax", "probabilities", clg__onnx_flat_input(ex, i), NULL, NULL);
    clg__onnx_attr_int(ex, n, "axis", 1);
}

const clg__layer_def clg__layer_softmax_xent = {
    .kind = CLG_LAYER_SOFTMAX_XENT, .keywords = keywords, .parse = parse, .format = format,
    .infer = infer, .forward = forward, .flops = flops,
    .output = 1, .task = CLG_TASK_CLASSIFICATION, .view = CLG__VIEW_ALWAYS, /* its output is its input, the logits */
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_softmax_xent(clg_net *net)
{
    clg__layer l = {.kind = CLG_LAYER_SOFTMAX_XENT};
    return clg__net_append(net, &l, "clg_net_add_softmax_xent");
}
