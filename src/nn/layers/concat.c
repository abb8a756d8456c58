/* Layer entry: inputs of equal height and width stacked along the channels, in input order
 * ("concat b1,b2,b3" after the fourth branch's last line, or "concat from=b1,b2,b3,b4"). */
#include <stdio.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status parse(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l)
{
    return clg__layer_options(p, tok, ntok, 1, l, clg__layer_no_option);
}

static void format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)l;
    clg__text_put(o, "concat%s%s", inputs[0] ? " " : "", inputs);
}

static clg_status infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    size_t c = 0;
    for (size_t k = 0; k < l->nin; k++) {
        if (l->ins[k].h != l->ins[0].h || l->ins[k].w != l->ins[0].w) {
            snprintf(why, cap, "input %zu is %zux%zu, input 1 %zux%zu (HxW): stacking needs one "
                     "size", k + 1, l->ins[k].h, l->ins[k].w, l->ins[0].h, l->ins[0].w);
            return CLG_ERR_SHAPE;
        }
        c += l->ins[k].c;
    }
    *out = (clg_shape){1, c, l->ins[0].h, l->ins[0].w};
    return CLG_OK;
}

static clg_status forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)train, (void)step;
    clg__layer *l = &net->layers[i];
    clg_status st = CLG_OK;
    for (size_t k = 0, at = 0; k < l->nin && st == CLG_OK; at += l->ins[k++].c)
        st = clg__tensor_stack(net->ctx, clg__net_input_k(net, i, k), &l->y_n, at, 1);
    return st;
}

static clg_status backward(clg_net *net, size_t i, uint64_t step)
{
    (void)step;
    clg__layer *l = &net->layers[i];
    clg_status st = CLG_OK;
    for (size_t k = 0, at = 0; k < l->nin && st == CLG_OK; at += l->ins[k++].c)
        if (clg__net_needs_dx(net, i, k))
            st = clg__tensor_stack(net->ctx, &l->dx_n[k], &l->dy_n, at, 0);
    return st;
}

static double flops(const clg__layer *l)
{
    (void)l;
    return 0.0; /* copies only */
}

static const char *const keywords[] = {"concat", NULL};

static void export_onnx(clg__onnx_out *ex, size_t i)
{
    const clg__layer *l = clg__onnx_layer(ex, i);
    Onnx__NodeProto *n =
        clg__onnx_node(ex, "Concat", l->name, clg__onnx_input(ex, i, 0), NULL, NULL);
    clg__onnx_all_inputs(ex, n, i);
    clg__onnx_attr_int(ex, n, "axis", 1);
    clg__onnx_keep_rank(ex, i);
}

const clg__layer_def clg__layer_concat = {
    .kind = CLG_LAYER_CONCAT, .keywords = keywords, .parse = parse, .format = format,
    .infer = infer, .forward = forward, .backward = backward, .flops = flops, .multi_input = 1,
    .onnx_export = export_onnx,
};

/* The builder's call (nn.h). */
clg_status clg_net_add_concat(clg_net *net, const char *const *names, size_t n)
{
    clg__layer l = {.kind = CLG_LAYER_CONCAT};
    clg_status st = clg__net_find_inputs(net, names, n, &l, "clg_net_add_concat");
    return st == CLG_OK ? clg__net_append(net, &l, "clg_net_add_concat") : st;
}
