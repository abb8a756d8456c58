/* ONNX export: each layer as the ONNX operators that compute the same (opset 13, written by
 * its kind's entry in the layer table), its parameters as initializers, the network's input
 * as "input" (N x C x H x W, N free) and its output as "probabilities". Built as protobuf-c
 * messages, packed, written atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_internal.h"
#include "nn/onnx_writer.h"

#define OPSET 13

/* A value info: name, float, dims (a negative one: the free batch dimension "N"). */
static Onnx__ValueInfoProto *value_info(clg__onnx_out *ex, const char *name, const int64_t *dims,
                                        size_t n)
{
    Onnx__ValueInfoProto *v = clg__onnx_own(ex, clg__calloc(1, sizeof *v));
    Onnx__TypeProto *t = clg__onnx_own(ex, clg__calloc(1, sizeof *t));
    Onnx__TypeProto__Tensor *tt = clg__onnx_own(ex, clg__calloc(1, sizeof *tt));
    Onnx__TensorShapeProto *s = clg__onnx_own(ex, clg__calloc(1, sizeof *s));
    Onnx__TensorShapeProto__Dimension **d = clg__onnx_own(ex, clg__calloc(n, sizeof *d));
    if (!v || !t || !tt || !s || !d)
        return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(s);
    for (size_t i = 0; i < n; i++) {
        d[i] = clg__onnx_own(ex, clg__calloc(1, sizeof *d[i]));
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
static char *class_lines(clg__onnx_out *ex)
{
    size_t len = 1;
    for (size_t k = 0; k < ex->net->classes; k++)
        len += strlen(clg_net_class_name(ex->net, k)) + 1;
    char *s = clg__onnx_own(ex, clg__malloc(len)), *at = s;
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
    if (net->task == CLG_TASK_NONE || !clg__net_has_output(net))
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_export_onnx: the network has "
                         "no output layer (softmax, pixelsoftmax or regression)");
    clg__onnx_out ex = {0};
    ex.net = net;
    ex.input = "input";
    ex.rank2 = clg__onnx_own(&ex, clg__calloc(net->count, sizeof *ex.rank2));
    if (net->in_norm) { /* (input - mean) / std, per channel, broadcast over N, H and W */
        int64_t dims[4] = {1, (int64_t)net->input.c, 1, 1};
        clg__onnx_initializer(&ex, "input.mean", NULL, net->in_norm, dims, 4);
        clg__onnx_initializer(&ex, "input.std", NULL, net->in_norm + net->input.c, dims, 4);
        clg__onnx_node(&ex, "Sub", "input.centred", "input", "input.mean", NULL);
        clg__onnx_node(&ex, "Div", "input.normalised", "input.centred", "input.std", NULL);
        ex.input = "input.normalised";
    }
    for (size_t i = 0; !ex.failed && i < net->count; i++)
        clg__layer_def_of(net->layers[i].kind)->onnx_export(&ex, i);
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets[1] = {&opset};
    Onnx__StringStringEntryProto meta = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *metas[1] = {&meta};
    int64_t in_dims[4] = {-1, (int64_t)net->input.c, (int64_t)net->input.h, (int64_t)net->input.w};
    /* a classifier's probabilities (N x classes); a segmenter's per pixel (N x K x H x W); a
     * regression's output, of its input's rank */
    const clg__layer *last = &net->layers[net->count - 1];
    clg_shape o = last->in;
    int flat = net->task == CLG_TASK_CLASSIFICATION ||
               (net->task == CLG_TASK_REGRESSION && ex.rank2[net->count - 1]);
    int64_t out_dims[4] = {-1, flat ? (int64_t)clg_shape_numel(o) : (int64_t)o.c, (int64_t)o.h,
                           (int64_t)o.w};
    Onnx__ValueInfoProto *in = value_info(&ex, "input", in_dims, 4);
    Onnx__ValueInfoProto *out = value_info(
        &ex, net->task == CLG_TASK_REGRESSION ? "output" : "probabilities", out_dims, flat ? 2 : 4);
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
