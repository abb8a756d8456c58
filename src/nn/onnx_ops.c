/* ONNX import, operator by operator: each node as the line of clgrad's network text that
 * computes the same, its constants recorded for the layer's parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/onnx_import_internal.h"

/* Conv's or a pool's pads "T,B,L,R" from ONNX's (x1_begin, x2_begin, x1_end, x2_end), or
 * auto_pad's SAME_* as pad=same|same-lower (resolved from the input's size when the layer is
 * added). */
static clg_status pads(importer *im, const Onnx__NodeProto *node, const int add[4], char *out,
                       size_t cap)
{
    long p[4] = {0, 0, 0, 0};
    size_t n;
    clg_status st = clg__oi_ints(im, node, "pads", p, 4, &n);
    if (st != CLG_OK)
        return st;
    if (n && n != 4)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "pads has %zu values; 2-D layers take 4", n);
    char mode[16];
    clg__oi_string_attr(node, "auto_pad", "NOTSET", mode, sizeof mode);
    if (!strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER")) { /* from the input size */
        snprintf(out, cap, "pad=%s", mode[5] == 'U' ? "same" : "same-lower");
        return CLG_OK;
    } else if (strcmp(mode, "NOTSET") && strcmp(mode, "VALID")) {
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "auto_pad \"%s\"", mode);
    } else if (!strcmp(mode, "VALID")) {
        p[0] = p[1] = p[2] = p[3] = 0;
    }
    if (add) /* a zero Pad before it (T,B,L,R), folded in */
        p[0] += add[0], p[2] += add[1], p[1] += add[2], p[3] += add[3];
    snprintf(out, cap, "pad=%ld,%ld,%ld,%ld", p[0], p[2], p[1], p[3]); /* T,B,L,R */
    return CLG_OK;
}

/* Whether Flatten at axis gives (N, rest): axis 1, or a later one where every axis between
 * N and it has size 1 (e.g. axis 2 of N x 1 x H x W). */
static int flatten_keeps_n(importer *im, const value *x, long axis)
{
    long rank = x->flat ? 2 : 4;
    axis = axis < 0 ? axis + rank : axis;
    if (axis == 1)
        return 1;
    int64_t d[4];
    if (x->flat || axis < 2 || axis > 4 || !clg__oi_layer_shape(im, x, d))
        return 0;
    for (long i = 1; i < axis; i++)
        if (d[i] != 1)
            return 0;
    return 1;
}

/* A convolution's operands (a transposed one's too): data, 4-D weights, an optional bias,
 * kernel_shape checked against the weights, strides and dilations. */
typedef struct conv_operands {
    value *x, *w, *b;
    long stride[2], dil[2];
} conv_operands;

static clg_status conv_operands_of(importer *im, const Onnx__NodeProto *node, const char *what,
                                   conv_operands *o)
{
    o->b = NULL;
    o->stride[0] = o->stride[1] = o->dil[0] = o->dil[1] = 1;
    clg_status st = clg__oi_input(im, node, 0, 0, &o->x);
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 1, 2, &o->w);
    if (st == CLG_OK && node->n_input > 2 && node->input[2][0])
        st = clg__oi_input(im, node, 2, 2, &o->b);
    if (st != CLG_OK)
        return st;
    const Onnx__TensorProto *wt = o->w->tensor;
    if (wt->n_dims != 4)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a %zu-D %s (clgrad's are 2-D)",
                            wt->n_dims > 2 ? wt->n_dims - 2 : 0, what);
    long ks[2];
    size_t n;
    if ((st = clg__oi_ints(im, node, "kernel_shape", ks, 2, &n)) != CLG_OK)
        return st;
    if (n == 2 && (ks[0] != wt->dims[2] || ks[1] != wt->dims[3]))
        return clg__oi_fail(im, CLG_ERR_CORRUPT, "kernel_shape %ldx%ld against weights of "
                            "%lldx%lld", ks[0], ks[1], (long long)wt->dims[2],
                            (long long)wt->dims[3]);
    if ((st = clg__oi_ints(im, node, "strides", o->stride, 2, &n)) != CLG_OK)
        return st;
    return clg__oi_ints(im, node, "dilations", o->dil, 2, &n);
}

static clg_status conv(importer *im, const Onnx__NodeProto *node, size_t k)
{
    conv_operands o;
    clg_status st = clg__oi_known_attrs(im, node, "kernel_shape,strides,pads,dilations,group,auto_pad");
    if (st == CLG_OK)
        st = conv_operands_of(im, node, "convolution", &o);
    char pad[96];
    if (st == CLG_OK)
        st = pads(im, node, o.x->pad, pad, sizeof pad);
    if (st != CLG_OK)
        return st;
    const Onnx__TensorProto *wt = o.w->tensor;
    long group = clg__oi_int_attr(node, "group", 1);
    char name[CLG_LAYER_NAME];
    st = clg__oi_layer(im, node, k, o.x->layer, name, "conv %lldx%lldx%lld %s stride=%ld,%ld "
                       "dilation=%ld,%ld groups=%ld bias=%d", (long long)wt->dims[2],
                       (long long)wt->dims[3], (long long)wt->dims[0], pad, o.stride[0],
                       o.stride[1], o.dil[0], o.dil[1], group, o.b != NULL);
    if (st == CLG_OK)
        st = clg__oi_record(im, name, 0, wt, 1.0f, NULL);
    if (st == CLG_OK && o.b)
        st = clg__oi_record(im, name, 1, o.b->tensor, 1.0f, NULL);
    return st;
}

/* ConvTranspose: weights C_in x C_out/group x R x S, as clgrad's convt keeps them; explicit
 * pads (auto_pad SAME and output_shape are refused: say the pads). */
static clg_status conv_transpose(importer *im, const Onnx__NodeProto *node, size_t k)
{
    conv_operands o;
    clg_status st = clg__oi_known_attrs(im, node, "kernel_shape,strides,pads,dilations,group,"
                                                  "auto_pad,output_padding");
    if (st == CLG_OK)
        st = conv_operands_of(im, node, "transposed convolution", &o);
    long op[2] = {0, 0};
    size_t n;
    if (st == CLG_OK)
        st = clg__oi_ints(im, node, "output_padding", op, 2, &n);
    char pad[96];
    if (st == CLG_OK)
        st = pads(im, node, NULL, pad, sizeof pad);
    if (st != CLG_OK)
        return st;
    if (!strncmp(pad, "pad=same", 8))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "auto_pad SAME on a transposed "
                            "convolution (give its pads)");
    const Onnx__TensorProto *wt = o.w->tensor;
    long group = clg__oi_int_attr(node, "group", 1);
    char name[CLG_LAYER_NAME];
    st = clg__oi_layer(im, node, k, o.x->layer, name, "convt %lldx%lldx%lld %s stride=%ld,%ld "
                       "outpad=%ld,%ld dilation=%ld,%ld groups=%ld bias=%d",
                       (long long)wt->dims[2], (long long)wt->dims[3],
                       (long long)wt->dims[1] * group, pad, o.stride[0], o.stride[1], op[0],
                       op[1], o.dil[0], o.dil[1], group, o.b != NULL);
    if (st == CLG_OK)
        st = clg__oi_record(im, name, 0, wt, 1.0f, NULL);
    if (st == CLG_OK && o.b)
        st = clg__oi_record(im, name, 1, o.b->tensor, 1.0f, NULL);
    return st;
}

static clg_status pool(importer *im, const Onnx__NodeProto *node, size_t k, int max)
{
    value *x;
    clg_status st = clg__oi_known_attrs(im, node, max ? "kernel_shape,strides,pads,ceil_mode,auto_pad,"
                                                "dilations,storage_order"
                                              : "kernel_shape,strides,pads,ceil_mode,auto_pad,"
                                                "count_include_pad");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    if (st != CLG_OK)
        return st;
    if (node->n_output > 1 && node->output[1][0])
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "MaxPool's Indices output");
    long ks[2], stride[2] = {1, 1}, dil[2] = {1, 1};
    size_t n;
    if ((st = clg__oi_ints(im, node, "kernel_shape", ks, 2, &n)) != CLG_OK)
        return st;
    if (n != 2)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a %zu-D pooling (clgrad's are 2-D)", n);
    if ((st = clg__oi_ints(im, node, "strides", stride, 2, &n)) != CLG_OK ||
        (st = clg__oi_ints(im, node, "dilations", dil, 2, &n)) != CLG_OK)
        return st;
    if (dil[0] != 1 || dil[1] != 1)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "dilated pooling");
    if (clg__oi_int_attr(node, "storage_order", 0) != 0)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "storage_order 1 (column-major indices)");
    char pad[96];
    if ((st = pads(im, node, NULL, pad, sizeof pad)) != CLG_OK)
        return st;
    char name[CLG_LAYER_NAME];
    return clg__oi_layer(im, node, k, x->layer, name, "%s %ldx%ld stride=%ld,%ld %s ceil=%ld%s",
                 max ? "maxpool" : "avgpool", ks[0], ks[1], stride[0], stride[1], pad,
                 clg__oi_int_attr(node, "ceil_mode", 0) ? 1L : 0L,
                 max ? "" : clg__oi_int_attr(node, "count_include_pad", 0) ? " exclude-pad=0"
                                                                    : " exclude-pad=1");
}

/* Gemm (transA 0) and MatMul with a constant right side: fc. Its weights stored M x K. */
static clg_status fully_connected(importer *im, const Onnx__NodeProto *node, size_t k, int gemm)
{
    value *a, *b, *c = NULL;
    clg_status st = clg__oi_known_attrs(im, node, gemm ? "alpha,beta,transA,transB" : "");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &a);
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 1, 2, &b);
    if (st == CLG_OK && gemm && node->n_input > 2 && node->input[2][0])
        st = clg__oi_input(im, node, 2, 2, &c);
    if (st != CLG_OK)
        return st;
    if (gemm && clg__oi_int_attr(node, "transA", 0))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "transA 1 (the layer's input transposed)");
    const Onnx__TensorProto *bt = b->tensor;
    if (bt->n_dims != 2)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a %zu-D weight (fully connected layers take 2-D)",
                    bt->n_dims);
    int trans = gemm && clg__oi_int_attr(node, "transB", 0);
    size_t outs = (size_t)bt->dims[trans ? 0 : 1], ins = (size_t)bt->dims[trans ? 1 : 0];
    char name[CLG_LAYER_NAME];
    st = clg__oi_layer(im, node, k, a->layer, name, "fc %zu", outs);
    size_t at;
    if (st == CLG_OK)
        st = clg__oi_record(im, name, 0, bt, gemm ? clg__oi_float_attr(node, "alpha", 1.0f) : 1.0f, &at);
    if (st == CLG_OK && !trans) { /* stored K x M: transposed into clgrad's M x K */
        param_rec *r = &im->p[at];
        float *t = clg__malloc(r->n * sizeof *t);
        if (!t)
            return clg__oom(im->ctx, "ONNX import");
        for (size_t i = 0; i < ins; i++)
            for (size_t o = 0; o < outs; o++)
                t[o * ins + i] = r->data[i * outs + o];
        free(r->data);
        r->data = t;
    }
    if (st == CLG_OK && c) {
        st = clg__oi_record(im, name, 1, c->tensor, clg__oi_float_attr(node, "beta", 1.0f), NULL);
        if (st == CLG_OK && im->p[im->np - 1].n != outs)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "bias C of %zu values for %zu outputs (clgrad "
                        "adds one per output, no other broadcast)", im->p[im->np - 1].n, outs);
    }
    if (st == CLG_OK && !c) /* MatMul: a following Add of a constant may bring the bias */
        clg__oi_find(im, node->output[0])->bias_open = 1;
    return st;
}

static clg_status batchnorm(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x, *v[4];
    clg_status st = clg__oi_known_attrs(im, node, "epsilon,momentum,spatial,training_mode,is_test");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    for (size_t i = 0; st == CLG_OK && i < 4; i++)
        st = clg__oi_input(im, node, i + 1, 2, &v[i]);
    if (st != CLG_OK)
        return st;
    if (clg__oi_int_attr(node, "training_mode", 0) || !clg__oi_int_attr(node, "is_test", 1) ||
        (node->n_output > 1 && node->output[1][0]))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "the training form (running statistics as "
                    "outputs); clgrad imports the inference form and trains it itself");
    if (clg__oi_int_attr(node, "spatial", 1) != 1)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "spatial 0 (statistics per element)");
    /* ONNX keeps momentum of the running statistics, clgrad the new batch's weight */
    char name[CLG_LAYER_NAME];
    st = clg__oi_layer(im, node, k, x->layer, name, "batchnorm momentum=%.7g eps=%.9g", /* 1 - float: 7 */
               1.0 - (double)clg__oi_float_attr(node, "momentum", 0.9f),
               (double)clg__oi_float_attr(node, "epsilon", 1e-5f));
    for (int i = 0; st == CLG_OK && i < 4; i++) /* scale, B, mean, var */
        st = clg__oi_record(im, name, i, v[i]->tensor, 1.0f, NULL);
    return st;
}

/* Add: of two layers' outputs (add), or of a constant bias onto a MatMul's fc. */
static clg_status add(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *a, *b;
    clg_status st = clg__oi_known_attrs(im, node, "");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 1, &a);
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 1, 1, &b);
    if (st != CLG_OK)
        return st;
    if (a->is_layer && b->is_layer) {
        char name[CLG_LAYER_NAME];
        return clg__oi_layer(im, node, k, a->layer, name, "add %s", b->layer);
    }
    value *fc = a->is_layer ? a : b, *bias = a->is_layer ? b : a;
    if (!fc->is_layer || !fc->bias_open)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a constant added to a layer's output (clgrad "
                    "adds a constant only as the bias of a MatMul before it)");
    st = clg__oi_record(im, fc->layer, 1, bias->tensor, 1.0f, NULL); /* its length checked in fill */
    clg__oi_alias(im, node, fc, 0);
    return st;
}

/* Concat (channels) or Sum (of layers' outputs): "concat b,c" / "add b,c" from the first. More
 * inputs than a layer takes are taken in parts, each part's layer the next one's first input
 * (both are associative: the same values). */
static clg_status concat(importer *im, const Onnx__NodeProto *node, size_t k, int sum)
{
    clg_status st = clg__oi_known_attrs(im, node, sum ? "" : "axis");
    long axis = clg__oi_int_attr(node, "axis", 1);
    if (st == CLG_OK && !sum && axis != 1 && axis != -3)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "axis %ld (clgrad concatenates channels: 1)", axis);
    if (st == CLG_OK && node->n_input == 1) { /* of one layer: that layer's output */
        value *only;
        st = clg__oi_input(im, node, 0, 0, &only);
        if (st == CLG_OK)
            clg__oi_alias(im, node, only, 0);
        return st;
    }
    if (node->n_input < 2)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "%zu inputs", node->n_input);
    char rest[CLG_LAYER_INPUTS * CLG_LAYER_NAME] = "", first[CLG_LAYER_NAME] = "";
    size_t len = 0, taken = 0; /* inputs in the layer being written after its first */
    for (size_t i = 0; st == CLG_OK && i < node->n_input; i++) {
        value *in;
        st = clg__oi_input(im, node, i, 0, &in);
        if (st == CLG_OK && i == 0) {
            snprintf(first, sizeof first, "%s", in->layer);
            continue;
        }
        if (st == CLG_OK && taken == CLG_LAYER_INPUTS - 1) { /* full: a part, then on */
            char part[CLG_LAYER_NAME];
            st = clg__oi_part(im, k, first, part, "%s %s", sum ? "add" : "concat", rest);
            snprintf(first, sizeof first, "%s", part);
            len = taken = 0, rest[0] = '\0';
        }
        if (st == CLG_OK)
            len += (size_t)snprintf(rest + len, sizeof rest - len, "%s%s", taken++ ? "," : "",
                                    in->layer);
    }
    char name[CLG_LAYER_NAME];
    return st == CLG_OK ? clg__oi_layer(im, node, k, first, name, "%s %s", sum ? "add" : "concat",
                                rest)
                        : st;
}

/* Reshape to (N, everything else): clgrad's fully connected layers flatten themselves. */
static clg_status reshape(importer *im, const Onnx__NodeProto *node)
{
    value *x, *shape;
    clg_status st = clg__oi_known_attrs(im, node, "allowzero");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 1, 2, &shape);
    int64_t s[CLG__ONNX_MAX_DIMS];
    size_t n = 0;
    if (st == CLG_OK)
        st = clg__onnx_int64s(im->ctx, shape->tensor, s, CLG__ONNX_MAX_DIMS, &n);
    if (st != CLG_OK)
        return st;
    if (n != 2 || !(s[0] == 0 || s[0] == -1 || s[0] > 0) || !(s[1] == -1 || s[1] > 0) ||
        (s[0] == -1 && s[1] == -1))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a reshape other than a flatten to (N, -1)");
    clg__oi_alias(im, node, x, 1);
    return CLG_OK;
}

static clg_status activation(importer *im, const Onnx__NodeProto *node, size_t k,
                             const char *line, const char *attrs)
{
    value *x;
    clg_status st = clg__oi_known_attrs(im, node, attrs);
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    char name[CLG_LAYER_NAME];
    return st == CLG_OK ? clg__oi_layer(im, node, k, x->layer, name, "%s", line) : st;
}

clg_status clg__oi_node(importer *im, const Onnx__NodeProto *node, size_t k)
{
    const char *op = node->op_type ? node->op_type : "";
    char line[64];
    value *x;
    clg_status st;
    if (node->domain && node->domain[0] && strcmp(node->domain, "ai.onnx"))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "operator domain \"%s\" (clgrad reads ONNX's own "
                    "operators)", node->domain);
    if (!node->n_output || !node->output[0][0])
        return clg__oi_fail(im, CLG_ERR_CORRUPT, "no output");
    if (im->ended)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "an operator after the Softmax (clgrad's softmax "
                    "is the network's output, its last layer)");
    int done;
    if ((st = clg__oi_fold(im, node, &done)) != CLG_OK || done)
        return st;
    if (!strcmp(op, "Sub") || !strcmp(op, "Div")) {
        st = clg__oi_input_norm(im, node, &done);
        if (st != CLG_OK || done)
            return st;
    }
    if (!strcmp(op, "Conv"))
        return conv(im, node, k);
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool"))
        return pool(im, node, k, op[0] == 'M');
    if (!strcmp(op, "GlobalAveragePool"))
        return activation(im, node, k, "gap", "");
    if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul"))
        return fully_connected(im, node, k, op[0] == 'G');
    if (!strcmp(op, "BatchNormalization"))
        return batchnorm(im, node, k);
    if (!strcmp(op, "Constant"))
        return clg__oi_constant(im, node);
    if (!strcmp(op, "Clip"))
        return clg__oi_clip(im, node, k);
    if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish") ||
        (!strcmp(op, "Sigmoid") && im->fuse_gate))
        return clg__oi_gate(im, node, k);
    if (!strcmp(op, "ReduceMean"))
        return clg__oi_reduce_mean(im, node, k);
    if (!strcmp(op, "Mul"))
        return clg__oi_mul(im, node, k);
    if (!strcmp(op, "Relu") || !strcmp(op, "Sigmoid") || !strcmp(op, "Tanh"))
        return activation(im, node, k, op[0] == 'R' ? "relu" : op[0] == 'S' ? "sigmoid" : "tanh",
                          "");
    if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Elu")) {
        int leaky = op[0] == 'L';
        snprintf(line, sizeof line, "%s alpha=%.9g", leaky ? "leaky" : "elu",
                 (double)clg__oi_float_attr(node, "alpha", leaky ? 0.01f : 1.0f));
        return activation(im, node, k, line, "alpha");
    }
    if (!strcmp(op, "Add"))
        return add(im, node, k);
    if (!strcmp(op, "Concat") || !strcmp(op, "Sum"))
        return concat(im, node, k, op[0] == 'S');
    if (!strcmp(op, "Flatten") || !strcmp(op, "Identity")) {
        st = clg__oi_known_attrs(im, node, "axis");
        if (st == CLG_OK) /* an Identity of a constant is that constant */
            st = clg__oi_input(im, node, 0, op[0] == 'I', &x);
        if (st == CLG_OK && op[0] == 'F' && !flatten_keeps_n(im, x, clg__oi_int_attr(node, "axis", 1)))
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "axis %ld: it does not keep N apart "
                                "(clgrad flattens to (N, rest))", clg__oi_int_attr(node, "axis", 1));
        if (st == CLG_OK)
            clg__oi_alias(im, node, x, op[0] == 'F');
        return st;
    }
    if (!strcmp(op, "Reshape") || !strcmp(op, "Transpose")) {
        int done;
        st = clg__oi_shuffle_step(im, node, k, &done);
        if (st == CLG_OK && !done && op[0] == 'T')
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a Transpose other than a channel "
                                "shuffle's (perm 0,2,1,3,4 of a Reshape to N x g x C/g x H x W)");
        return st != CLG_OK || done ? st : reshape(im, node);
    }
    if (!strcmp(op, "Split"))
        return clg__oi_split(im, node, k);
    if (!strcmp(op, "Slice"))
        return clg__oi_slice(im, node, k);
    if (!strcmp(op, "Pad"))
        return clg__oi_pad(im, node, k);
    if (!strcmp(op, "ConvTranspose"))
        return conv_transpose(im, node, k);
    if (!strcmp(op, "Resize") || !strcmp(op, "Upsample"))
        return clg__oi_resize(im, node, k);
    if (!strcmp(op, "Dropout")) {
        float ratio = clg__oi_float_attr(node, "ratio", 0.5f);
        st = clg__oi_known_attrs(im, node, "ratio,seed,is_test");
        if (st == CLG_OK && node->n_input > 1 && node->input[1][0]) /* opset 12: an input */
            st = clg__oi_scalar_input(im, node, 1, &ratio);
        if (st == CLG_OK && node->n_input > 2 && node->input[2][0])
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "the training_mode input (clgrad drops out "
                        "while training only)");
        if (st != CLG_OK)
            return st;
        if (!(ratio >= 0.0f && ratio < 1.0f))
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "ratio %g", (double)ratio);
        snprintf(line, sizeof line, "dropout %.9g", (double)ratio);
        return activation(im, node, k, line, "ratio,seed,is_test");
    }
    if (!strcmp(op, "Softmax")) {
        st = clg__oi_known_attrs(im, node, "axis");
        if (st == CLG_OK)
            st = clg__oi_input(im, node, 0, 0, &x);
        long axis = clg__oi_int_attr(node, "axis", -1);
        if (st == CLG_OK && !x->flat && axis != 1 && axis != -1)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "axis %ld (clgrad's softmax is over each "
                        "sample's values)", axis);
        im->ended = st == CLG_OK;
        return st == CLG_OK ? activation(im, node, k, "softmax", "axis") : st;
    }
    return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "clgrad has no layer for this operator (it imports "
                "Conv, ConvTranspose, Resize and Upsample by whole factors, MaxPool, AveragePool, GlobalAveragePool, ReduceMean over H and W, Gemm, "
                "MatMul, BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh, Clip, "
                "HardSigmoid, HardSwish, Mul of two layers, Add, Sum, Concat, "
                "Flatten, Reshape as a flatten, Split, Slice and Reshape-Transpose-Reshape of the channels, "
                "Pad over H and W, "
                "Dropout, Identity, Constant, Softmax, a Sub and Div of "
                "the input by constants (its normalisation), and Shape, Gather, Unsqueeze, Squeeze, "
                "Concat, Cast, Add, Sub, Mul and Div of constants, which it evaluates)");
}
