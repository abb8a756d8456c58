/* ONNX export: each layer as the ONNX operators that compute the same (opset 13), its
 * parameters as initializers, the network's input as "input" (N x C x H x W, N free) and its
 * output as "probabilities". Built as protobuf-c messages, packed, written atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"
#include "nn/onnx_internal.h"

#define OPSET 13

/* Everything allocated for the model, freed at the end (protobuf-c only packs it). */
typedef struct exporter {
    clg_net *net;
    void **owned;
    size_t nowned, cap;
    int failed;
    Onnx__NodeProto **nodes;
    size_t nnodes, nodes_cap;
    Onnx__TensorProto **inits;
    size_t ninits, inits_cap;
    int *rank2;               /* per layer: its ONNX output is 2-D (N x M) */
} exporter;

static void *own(exporter *ex, void *p)
{
    if (!p || ex->failed) {
        ex->failed = 1;
        free(p);
        return NULL;
    }
    if (ex->nowned == ex->cap) {
        size_t cap = ex->cap ? 2 * ex->cap : 256;
        void **grown = clg__realloc(ex->owned, cap * sizeof *grown);
        if (!grown) {
            ex->failed = 1;
            free(p);
            return NULL;
        }
        ex->owned = grown, ex->cap = cap;
    }
    return ex->owned[ex->nowned++] = p;
}

static char *str(exporter *ex, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = own(ex, clg__malloc(n));
    if (s)
        snprintf(s, n, fmt, a, b ? b : "");
    return s;
}

static int push(exporter *ex, void ***list, size_t *n, size_t *cap, void *item)
{
    if (!item || ex->failed)
        return ex->failed = 1, 0;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 32;
        void **grown = clg__realloc(*list, c * sizeof *grown);
        if (!grown)
            return ex->failed = 1, 0;
        *list = grown, *cap = c;
    }
    (*list)[(*n)++] = item;
    return 1;
}

/* A node op(inputs) -> output; attributes added after. */
static Onnx__NodeProto *node(exporter *ex, const char *op, const char *out, const char *in0,
                             const char *in1, const char *in2)
{
    Onnx__NodeProto *n = own(ex, clg__calloc(1, sizeof *n));
    char **ins = own(ex, clg__calloc(3, sizeof *ins)), **outs = own(ex, clg__calloc(1, sizeof *outs));
    if (!n || !ins || !outs)
        return NULL;
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)out;
    const char *given[3] = {in0, in1, in2};
    for (int i = 0; i < 3 && given[i]; i++)
        ins[n->n_input++] = (char *)given[i];
    n->input = ins;
    outs[0] = (char *)out;
    n->output = outs, n->n_output = 1;
    push(ex, (void ***)&ex->nodes, &ex->nnodes, &ex->nodes_cap, n);
    return n;
}

static Onnx__AttributeProto *attr(exporter *ex, Onnx__NodeProto *n, const char *name)
{
    if (!n)
        return NULL;
    Onnx__AttributeProto *a = own(ex, clg__calloc(1, sizeof *a));
    Onnx__AttributeProto **list = own(ex, clg__calloc(n->n_attribute + 1, sizeof *list));
    if (!a || !list)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    if (n->n_attribute)
        memcpy(list, n->attribute, n->n_attribute * sizeof *list);
    list[n->n_attribute++] = a;
    n->attribute = list;
    return a;
}

static void attr_int(exporter *ex, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    if (a)
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, a->has_i = 1,
        a->i = v;
}

static void attr_float(exporter *ex, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    if (a)
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f = 1,
        a->f = v;
}

static void attr_ints(exporter *ex, Onnx__NodeProto *n, const char *name, const int64_t *v,
                      size_t count)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    int64_t *copy = own(ex, clg__malloc(count * sizeof *copy));
    if (!a || !copy)
        return;
    memcpy(copy, v, count * sizeof *copy);
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->ints = copy, a->n_ints = count;
}

/* An initializer `name` of the given dims from a device tensor (or host floats). */
static void initializer(exporter *ex, const char *name, const clg_tensor *t, const float *host,
                        const int64_t *dims, size_t ndims)
{
    size_t n = 1;
    for (size_t i = 0; i < ndims; i++)
        n *= (size_t)dims[i];
    Onnx__TensorProto *tp = own(ex, clg__calloc(1, sizeof *tp));
    float *data = own(ex, clg__malloc(n ? n * sizeof *data : 1));
    int64_t *d = own(ex, clg__malloc((ndims ? ndims : 1) * sizeof *d));
    if (!tp || !data || !d)
        return;
    if (t && (clg_tensor_numel(t) != n || clg_tensor_download(t, data, n) != CLG_OK)) {
        ex->failed = 1;
        return;
    }
    if (host)
        memcpy(data, host, n * sizeof *data);
    onnx__tensor_proto__init(tp);
    tp->name = (char *)name;
    if (ndims) /* a scalar has no dims */
        memcpy(d, dims, ndims * sizeof *d);
    tp->dims = d, tp->n_dims = ndims;
    tp->has_data_type = 1, tp->data_type = CLG__ONNX_FLOAT;
    tp->has_raw_data = 1; /* little-endian floats, as on every host clgrad runs on */
    tp->raw_data.data = (uint8_t *)data, tp->raw_data.len = n * sizeof *data;
    push(ex, (void ***)&ex->inits, &ex->ninits, &ex->inits_cap, tp);
}

/* The ONNX name of input k of layer i. */
static const char *in_name(const clg_net *net, size_t i, size_t k)
{
    size_t from = net->layers[i].from[k];
    return from == CLG_NET_INPUT ? "input" : net->layers[from].name;
}

static int in_rank2(const exporter *ex, size_t i)
{
    size_t from = ex->net->layers[i].from[0];
    return from != CLG_NET_INPUT && ex->rank2[from];
}

/* Layer i's input as a 2-D tensor (N x rest): its name, or a Flatten of it. */
static const char *flat_input(exporter *ex, size_t i)
{
    const char *x = in_name(ex->net, i, 0);
    if (in_rank2(ex, i))
        return x;
    char *flat = str(ex, "%s.flat%s", ex->net->layers[i].name, NULL);
    attr_int(ex, node(ex, "Flatten", flat, x, NULL, NULL), "axis", 1);
    return flat;
}

/* Node n reads every input of layer i (an add of three or more, a concat). */
static void all_inputs(exporter *ex, Onnx__NodeProto *n, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    char **ins = own(ex, clg__calloc(l->nin, sizeof *ins));
    for (size_t k = 0; ins && k < l->nin; k++)
        ins[k] = (char *)in_name(ex->net, i, k);
    if (n && ins)
        n->input = ins, n->n_input = l->nin;
}

static void conv(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    const clg_conv2d_desc *d = &l->conv;
    char *w = str(ex, "%s.weight%s", l->name, NULL), *b = l->bias ? str(ex, "%s.bias%s", l->name, NULL) : NULL;
    int64_t dims[4] = {(int64_t)l->filters, (int64_t)(l->in.c / (size_t)d->groups),
                       (int64_t)l->kernel_h, (int64_t)l->kernel_w};
    initializer(ex, w, l->param[0], NULL, dims, 4);
    if (b)
        initializer(ex, b, l->param[1], NULL, dims, 1);
    Onnx__NodeProto *n = node(ex, "Conv", l->name, in_name(ex->net, i, 0), w, b);
    int64_t ks[2] = {(int64_t)l->kernel_h, (int64_t)l->kernel_w};
    int64_t st[2] = {d->stride_h, d->stride_w}, dil[2] = {d->dilation_h, d->dilation_w};
    int64_t pads[4] = {d->pad_top, d->pad_left, d->pad_bottom, d->pad_right};
    attr_ints(ex, n, "kernel_shape", ks, 2);
    attr_ints(ex, n, "strides", st, 2);
    attr_ints(ex, n, "dilations", dil, 2);
    attr_ints(ex, n, "pads", pads, 4);
    attr_int(ex, n, "group", d->groups);
}

static void pool(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    const clg_pool2d_desc *d = &l->pool;
    Onnx__NodeProto *n = node(ex, d->mode == CLG_POOL_MAX ? "MaxPool" : "AveragePool", l->name,
                              in_name(ex->net, i, 0), NULL, NULL);
    int64_t ks[2] = {d->window_h, d->window_w}, st[2] = {d->stride_h, d->stride_w};
    int64_t pads[4] = {d->pad_top, d->pad_left, d->pad_bottom, d->pad_right};
    attr_ints(ex, n, "kernel_shape", ks, 2);
    attr_ints(ex, n, "strides", st, 2);
    attr_ints(ex, n, "pads", pads, 4);
    attr_int(ex, n, "ceil_mode", d->ceil_mode ? 1 : 0);
    if (d->mode != CLG_POOL_MAX)
        attr_int(ex, n, "count_include_pad", d->mode == CLG_POOL_AVG ? 1 : 0);
}

/* fc: Flatten (a 4-D input) then Gemm with the weights as stored (M x K, transB). */
static void fc(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    const char *x = flat_input(ex, i);
    char *w = str(ex, "%s.weight%s", l->name, NULL), *b = str(ex, "%s.bias%s", l->name, NULL);
    int64_t dims[2] = {(int64_t)l->outputs, (int64_t)clg_shape_numel(l->in)};
    initializer(ex, w, l->param[0], NULL, dims, 2);
    initializer(ex, b, l->param[1], NULL, dims, 1);
    Onnx__NodeProto *n = node(ex, "Gemm", l->name, x, w, b);
    attr_int(ex, n, "transB", 1);
    ex->rank2[i] = 1;
}

static void batchnorm(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    const char *what[4] = {"%s.scale%s", "%s.shift%s", "%s.mean%s", "%s.var%s"};
    char *name[4];
    int64_t c = (int64_t)l->in.c;
    for (int k = 0; k < 4; k++) {
        name[k] = str(ex, what[k], l->name, NULL);
        initializer(ex, name[k], k < 2 ? l->param[k] : l->state[k - 2], NULL, &c, 1);
    }
    Onnx__NodeProto *n = node(ex, "BatchNormalization", l->name, in_name(ex->net, i, 0), name[0],
                              name[1]);
    if (!n)
        return;
    char **ins = own(ex, clg__calloc(5, sizeof *ins));
    if (!ins)
        return;
    memcpy(ins, n->input, 3 * sizeof *ins);
    ins[3] = name[2], ins[4] = name[3];
    n->input = ins, n->n_input = 5;
    attr_float(ex, n, "epsilon", l->eps);
    attr_float(ex, n, "momentum", 1.0f - l->momentum); /* ONNX: the running average's weight */
    ex->rank2[i] = in_rank2(ex, i);
}

static void activation(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    static const char *const op[] = {"Relu", "LeakyRelu", "Elu", "Sigmoid", "Tanh"};
    Onnx__NodeProto *n = node(ex, op[l->act], l->name, in_name(ex->net, i, 0), NULL, NULL);
    if (l->act == CLG_ACT_LEAKY_RELU || l->act == CLG_ACT_ELU)
        attr_float(ex, n, "alpha", l->alpha);
    ex->rank2[i] = in_rank2(ex, i);
}

static void add(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    const char *sum = l->relu ? str(ex, "%s.sum%s", l->name, NULL) : l->name;
    Onnx__NodeProto *n = node(ex, l->nin == 2 ? "Add" : "Sum", sum, in_name(ex->net, i, 0),
                              in_name(ex->net, i, 1), NULL);
    if (l->nin > 2)
        all_inputs(ex, n, i);
    if (l->relu)
        node(ex, "Relu", l->name, sum, NULL, NULL);
    ex->rank2[i] = in_rank2(ex, i);
}

static void concat(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    Onnx__NodeProto *n = node(ex, "Concat", l->name, in_name(ex->net, i, 0), NULL, NULL);
    all_inputs(ex, n, i);
    attr_int(ex, n, "axis", 1);
    ex->rank2[i] = in_rank2(ex, i);
}

/* The output: softmax over each sample's values, as "probabilities" (N x classes). */
static void softmax(exporter *ex, size_t i)
{
    attr_int(ex, node(ex, "Softmax", "probabilities", flat_input(ex, i), NULL, NULL), "axis", 1);
}

static void layer(exporter *ex, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    switch (l->kind) {
    case CLG_LAYER_CONV2D: conv(ex, i); break;
    case CLG_LAYER_POOL2D: pool(ex, i); break;
    case CLG_LAYER_GLOBAL_AVG_POOL:
        node(ex, "GlobalAveragePool", l->name, in_name(ex->net, i, 0), NULL, NULL);
        break;
    case CLG_LAYER_FC: fc(ex, i); break;
    case CLG_LAYER_BATCHNORM: batchnorm(ex, i); break;
    case CLG_LAYER_DROPOUT: {
        char *ratio = str(ex, "%s.ratio%s", l->name, NULL);
        initializer(ex, ratio, NULL, &l->p, NULL, 0);
        node(ex, "Dropout", l->name, in_name(ex->net, i, 0), ratio, NULL);
        ex->rank2[i] = in_rank2(ex, i);
        break;
    }
    case CLG_LAYER_ACTIVATION: activation(ex, i); break;
    case CLG_LAYER_SOFTMAX_XENT: softmax(ex, i); break;
    case CLG_LAYER_ADD: add(ex, i); break;
    case CLG_LAYER_CONCAT: concat(ex, i); break;
    }
}

/* A value info: name, float, dims (a negative one: the free batch dimension "N"). */
static Onnx__ValueInfoProto *value_info(exporter *ex, const char *name, const int64_t *dims,
                                        size_t n)
{
    Onnx__ValueInfoProto *v = own(ex, clg__calloc(1, sizeof *v));
    Onnx__TypeProto *t = own(ex, clg__calloc(1, sizeof *t));
    Onnx__TypeProto__Tensor *tt = own(ex, clg__calloc(1, sizeof *tt));
    Onnx__TensorShapeProto *s = own(ex, clg__calloc(1, sizeof *s));
    Onnx__TensorShapeProto__Dimension **d = own(ex, clg__calloc(n, sizeof *d));
    if (!v || !t || !tt || !s || !d)
        return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(s);
    for (size_t i = 0; i < n; i++) {
        d[i] = own(ex, clg__calloc(1, sizeof *d[i]));
        if (!d[i])
            return NULL;
        onnx__tensor_shape_proto__dimension__init(d[i]);
        if (dims[i] < 0) {
            d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d[i]->dim_param = "N";
        } else {
            d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d[i]->dim_value = dims[i];
        }
    }
    s->dim = d, s->n_dim = n;
    tt->has_elem_type = 1, tt->elem_type = CLG__ONNX_FLOAT, tt->shape = s;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, t->tensor_type = tt;
    v->name = (char *)name, v->type = t;
    return v;
}

/* The class names, one per line, for the metadata. */
static char *class_lines(exporter *ex)
{
    size_t len = 1;
    for (size_t k = 0; k < ex->net->classes; k++)
        len += strlen(clg_net_class_name(ex->net, k)) + 1;
    char *s = own(ex, clg__malloc(len)), *at = s;
    for (size_t k = 0; s && k < ex->net->classes; k++)
        at += sprintf(at, "%s%s", k ? "\n" : "", clg_net_class_name(ex->net, k));
    if (s)
        *at = '\0';
    return s;
}

clg_status clg_net_export_onnx(clg_net *net, const char *path)
{
    if (!net || !path)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_export_onnx: net and path must not be NULL");
    if (!net->classes || !clg__net_has_output(net))
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_export_onnx: the network has "
                         "no softmax output layer");
    exporter ex = {0};
    ex.net = net;
    ex.rank2 = own(&ex, clg__calloc(net->count, sizeof *ex.rank2));
    for (size_t i = 0; !ex.failed && i < net->count; i++)
        layer(&ex, i);
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets[1] = {&opset};
    Onnx__StringStringEntryProto meta = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *metas[1] = {&meta};
    int64_t in_dims[4] = {-1, (int64_t)net->input.c, (int64_t)net->input.h, (int64_t)net->input.w};
    int64_t out_dims[2] = {-1, (int64_t)net->classes};
    Onnx__ValueInfoProto *in = value_info(&ex, "input", in_dims, 4);
    Onnx__ValueInfoProto *out = value_info(&ex, "probabilities", out_dims, 2);
    opset.domain = "", opset.has_version = 1, opset.version = OPSET;
    meta.key = "clgrad.classes", meta.value = class_lines(&ex);
    m.has_ir_version = 1, m.ir_version = 7; /* what opset 13 came with */
    m.producer_name = "clgrad", m.producer_version = (char *)clg_version();
    m.opset_import = opsets, m.n_opset_import = 1;
    m.metadata_props = metas, m.n_metadata_props = 1;
    g.name = "clgrad";
    g.node = ex.nodes, g.n_node = ex.nnodes;
    g.initializer = ex.inits, g.n_initializer = ex.ninits;
    g.input = &in, g.n_input = 1;
    g.output = &out, g.n_output = 1;
    m.graph = &g;
    clg_status st = CLG_OK;
    if (ex.failed || !in || !out || !meta.value) {
        st = clg__fail(net->ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_net_export_onnx: out of "
                       "memory or a parameter could not be read: %s", clg_ctx_last_error(net->ctx));
    } else {
        size_t len = onnx__model_proto__get_packed_size(&m);
        uint8_t *buf = clg__malloc(len ? len : 1);
        if (!buf)
            st = clg__oom(net->ctx, "clg_net_export_onnx");
        else if (onnx__model_proto__pack(&m, buf) != len)
            st = clg__fail(net->ctx, CLG_ERR_INTERNAL, "clg_net_export_onnx: packing failed");
        else
            st = clg__file_write_atomic(net->ctx, path, buf, len);
        free(buf);
    }
    for (size_t i = 0; i < ex.nowned; i++)
        free(ex.owned[i]);
    free(ex.owned), free(ex.nodes), free(ex.inits);
    return st;
}
