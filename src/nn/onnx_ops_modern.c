/* ONNX import of what current exporters write around the classic layers: Constant nodes
 * (and Identity of a constant), Clip with its bounds as attributes (opsets 6-10) or inputs
 * (11-), HardSigmoid, HardSwish, x * Sigmoid(x) (SiLU) and x * HardSigmoid(x) (hard swish
 * before opset 14), Mul of two layers (squeeze-and-excitation gates), ReduceMean over H and
 * W with its axes as an attribute (to 17) or an input (18-), and the Sub and Div of the
 * network's input that are its normalisation. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/onnx_import_internal.h"

/* Constant: its value becomes a constant named by the output, as an initializer would. */
clg_status clg__oi_constant(importer *im, const Onnx__NodeProto *node)
{
    if (node->n_attribute != 1 || !node->attribute[0]->name)
        return clg__oi_fail(im, CLG_ERR_CORRUPT, "a Constant takes exactly one value attribute");
    const Onnx__AttributeProto *a = node->attribute[0];
    const char *key = a->name, *out = node->output[0];
    const Onnx__TensorProto *t = NULL;
    Onnx__TensorProto *made = NULL;
    if (!strcmp(key, "value") && a->t) {
        t = a->t;
    } else if (!strcmp(key, "value_float") || !strcmp(key, "value_floats")) {
        int one = key[11] == '\0';
        size_t n = one ? 1 : a->n_floats;
        int64_t d = (int64_t)n;
        if ((made = clg__oi_make_tensor(im, out, CLG__ONNX_FLOAT, &d, one ? 0 : 1)) && n)
            memcpy(made->float_data, one ? &a->f : a->floats, n * sizeof(float));
        t = made;
    } else if (!strcmp(key, "value_int") || !strcmp(key, "value_ints")) {
        int one = key[9] == '\0';
        size_t n = one ? 1 : a->n_ints;
        int64_t d = (int64_t)n;
        if ((made = clg__oi_make_tensor(im, out, CLG__ONNX_INT64, &d, one ? 0 : 1)) && n)
            memcpy(made->int64_data, one ? &a->i : a->ints, n * sizeof(int64_t));
        t = made;
    } else {
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a Constant's %s (clgrad reads value, "
                            "value_float(s) and value_int(s))", key);
    }
    if (!t)
        return clg__oom(im->ctx, "ONNX import");
    clg__oi_define(im, out)->tensor = t;
    return CLG_OK;
}

clg_status clg__oi_scalar_input(importer *im, const Onnx__NodeProto *node, size_t k, float *out)
{
    value *v;
    clg_status st = clg__oi_input(im, node, k, 2, &v);
    float *f = NULL;
    size_t n = 0;
    if (st == CLG_OK && (st = clg__onnx_floats(im->ctx, v->tensor, &f, &n)) != CLG_OK)
        st = clg__oi_fail(im, st, "%s", clg_ctx_last_error(im->ctx));
    if (st == CLG_OK && n != 1)
        st = clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "input %zu holds %zu values; one expected",
                          k, n);
    if (st == CLG_OK)
        *out = f[0];
    free(f);
    return st;
}

/* Clip: bounds from attributes (to opset 10) or optional inputs (11-), either may be absent
 * (no bound). [0, inf) is a ReLU; an upper bound alone is clip's with -FLT_MAX below. */
clg_status clg__oi_clip(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x;
    clg_status st = clg__oi_known_attrs(im, node, "min,max");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    float b[2] = {clg__oi_float_attr(node, "min", -INFINITY),
                  clg__oi_float_attr(node, "max", INFINITY)};
    for (size_t i = 1; st == CLG_OK && i < 3 && i < node->n_input; i++)
        if (node->input[i][0])
            st = clg__oi_scalar_input(im, node, i, &b[i - 1]);
    if (st != CLG_OK)
        return st;
    if (isnan(b[0]) || isnan(b[1]) || !(b[0] <= b[1]))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "clip to [%g, %g]", (double)b[0],
                            (double)b[1]);
    char name[CLG_LAYER_NAME];
    if (b[0] == 0.0f && isinf(b[1]))
        return clg__oi_layer(im, node, k, x->layer, name, "relu");
    return clg__oi_layer(im, node, k, x->layer, name, "clip min=%.9g max=%.9g",
                         (double)fmaxf(b[0], -FLT_MAX), (double)fminf(b[1], FLT_MAX));
}

static int is_hard_swish_gate(const Onnx__NodeProto *node)
{
    float a = clg__oi_float_attr(node, "alpha", 0.2f), b = clg__oi_float_attr(node, "beta", 0.5f);
    return fabsf(a - 1.0f / 6) < 1e-6f && b == 0.5f;
}

/* Whether node k, a Sigmoid or a HardSigmoid of hard swish's slope, is a gate on its own
 * input: the next node multiplies that input by it, and nothing else reads it. */
int clg__oi_fuses_gate(const importer *im, size_t k)
{
    const Onnx__GraphProto *g = im->g;
    const Onnx__NodeProto *s = g->node[k], *m = k + 1 < g->n_node ? g->node[k + 1] : NULL;
    if (!m || !s->op_type || !m->op_type || strcmp(m->op_type, "Mul") || m->n_input != 2 ||
        s->n_input != 1 || s->n_output != 1 || m->n_output < 1 || m->n_attribute)
        return 0;
    if (strcmp(s->op_type, "Sigmoid") && !(!strcmp(s->op_type, "HardSigmoid") && is_hard_swish_gate(s)))
        return 0;
    const char *x = s->input[0], *gate = s->output[0];
    int pair = (!strcmp(m->input[0], x) && !strcmp(m->input[1], gate)) ||
               (!strcmp(m->input[1], x) && !strcmp(m->input[0], gate));
    return pair && clg__oi_uses(im, gate) == 1;
}

/* HardSigmoid (alpha, beta), HardSwish, and with fuse_gate the Sigmoid or HardSigmoid whose
 * product with x follows: silu, hardswish. */
clg_status clg__oi_gate(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x;
    int hard = !strcmp(node->op_type, "HardSigmoid"), swish = !strcmp(node->op_type, "HardSwish");
    clg_status st = clg__oi_known_attrs(im, node, hard ? "alpha,beta" : "");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    if (st != CLG_OK)
        return st;
    char name[CLG_LAYER_NAME];
    if (swish || (im->fuse_gate && hard))
        return clg__oi_layer(im, node, k, x->layer, name, "hardswish");
    if (im->fuse_gate)
        return clg__oi_layer(im, node, k, x->layer, name, "silu");
    return clg__oi_layer(im, node, k, x->layer, name, "hardsigmoid alpha=%.9g beta=%.9g",
                         (double)clg__oi_float_attr(node, "alpha", 0.2f),
                         (double)clg__oi_float_attr(node, "beta", 0.5f));
}

/* ReduceMean over H and W, the mean an exporter writes for global average pooling: clgrad's
 * gap. Without keepdims its N x C output is a flattened gap's. */
clg_status clg__oi_reduce_mean(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x;
    int64_t axes[CLG__ONNX_MAX_DIMS];
    size_t n = 0;
    clg_status st = clg__oi_known_attrs(im, node, "axes,keepdims,noop_with_empty_axes");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    if (st == CLG_OK) /* an input from opset 18 */
        st = clg__oi_int_list(im, node, 1, "axes", axes, CLG__ONNX_MAX_DIMS, &n);
    if (st != CLG_OK)
        return st;
    int over[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        if (axes[i] >= -4 && axes[i] < 4)
            over[(axes[i] + 4) % 4] = 1;
    if (n != 2 || !over[2] || !over[3] || x->flat)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a mean over %zu axes (clgrad's is over H "
                            "and W of an N x C x H x W tensor: axes 2 and 3)", n);
    char name[CLG_LAYER_NAME];
    st = clg__oi_layer(im, node, k, x->layer, name, "gap");
    if (st == CLG_OK && !clg__oi_int_attr(node, "keepdims", 1))
        clg__oi_find(im, node->output[0])->flat = 1;
    return st;
}

/* Mul of two layers' outputs (a gate's C x 1 x 1 spread over H x W, as ONNX broadcasts). */
clg_status clg__oi_mul(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *a, *b;
    clg_status st = clg__oi_known_attrs(im, node, "");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &a);
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 1, 0, &b);
    if (st == CLG_OK && (a->flat || b->flat))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a product of flattened outputs (clgrad "
                            "multiplies N x C x H x W tensors, or by an N x C x 1 x 1 gate)");
    char name[CLG_LAYER_NAME];
    return st == CLG_OK ? clg__oi_layer(im, node, k, a->layer, name, "mul %s", b->layer) : st;
}

clg_status clg__oi_input_norm(importer *im, const Onnx__NodeProto *node, int *done)
{
    *done = 0;
    int div = !strcmp(node->op_type, "Div");
    value *x = node->n_input == 2 ? clg__oi_find(im, node->input[0]) : NULL;
    value *k = node->n_input == 2 ? clg__oi_find(im, node->input[1]) : NULL;
    /* the raw input read only here, or for Div the Sub's output */
    if (!x || !k || !x->is_layer || k->is_layer || strcmp(x->layer, "input") ||
        x->norm_stage >= 1 + div || node->n_attribute || clg__oi_uses(im, node->input[0]) != 1)
        return CLG_OK;
    float *v = NULL;
    size_t n = 0;
    clg_status st = clg__onnx_floats(im->ctx, k->tensor, &v, &n);
    if (st != CLG_OK || (n != 1 && n != im->in_c)) {
        free(v);
        return st != CLG_OK ? clg__oi_fail(im, st, "%s", clg_ctx_last_error(im->ctx))
                            : clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "the input %s by %zu values "
                                           "(clgrad normalises by one, or one per channel: %zu)",
                                           div ? "divided" : "less", n, im->in_c);
    }
    if (!im->norm && !(im->norm = clg__malloc(2 * im->in_c * sizeof *im->norm))) {
        free(v);
        return clg__oom(im->ctx, "ONNX import");
    }
    if (!x->norm_stage) /* no Sub: a mean of 0 */
        for (size_t c = 0; c < im->in_c; c++)
            im->norm[c] = 0.0f, im->norm[im->in_c + c] = 1.0f;
    for (size_t c = 0; c < im->in_c; c++)
        im->norm[(div ? im->in_c : 0) + c] = v[n == 1 ? 0 : c];
    free(v);
    for (size_t c = 0; div && c < im->in_c; c++)
        if (!(im->norm[im->in_c + c] > 0.0f))
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "the input divided by %g (clgrad's "
                                "normalisation divides by a standard deviation above 0)",
                                (double)im->norm[im->in_c + c]);
    clg__oi_alias(im, node, x, 0);
    clg__oi_find(im, node->output[0])->norm_stage = 1 + div;
    *done = 1;
    return CLG_OK;
}
