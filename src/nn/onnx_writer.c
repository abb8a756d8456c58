/* The ONNX writer's building blocks (onnx_writer.h): what the exporter and each layer kind's
 * onnx_export entry use to add nodes and initializers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/onnx_internal.h"
#include "nn/onnx_writer.h"

void *clg__onnx_own(clg__onnx_out *ex, void *p)
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

char *clg__onnx_name(clg__onnx_out *ex, const char *base, const char *suffix)
{
    size_t n = strlen(base) + strlen(suffix) + 1;
    char *s = clg__onnx_own(ex, clg__malloc(n));
    if (s)
        snprintf(s, n, "%s%s", base, suffix);
    return s;
}

static int push(clg__onnx_out *ex, void ***list, size_t *n, size_t *cap, void *item)
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

Onnx__NodeProto *clg__onnx_node(clg__onnx_out *ex, const char *op, const char *out,
                                const char *in0, const char *in1, const char *in2)
{
    Onnx__NodeProto *n = clg__onnx_own(ex, clg__calloc(1, sizeof *n));
    char **ins = clg__onnx_own(ex, clg__calloc(3, sizeof *ins));
    char **outs = clg__onnx_own(ex, clg__calloc(1, sizeof *outs));
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

static Onnx__AttributeProto *attr(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name)
{
    if (!n)
        return NULL;
    Onnx__AttributeProto *a = clg__onnx_own(ex, clg__calloc(1, sizeof *a));
    Onnx__AttributeProto **list =
        clg__onnx_own(ex, clg__calloc(n->n_attribute + 1, sizeof *list));
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

void clg__onnx_attr_int(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    if (a)
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, a->has_i = 1,
        a->i = v;
}

void clg__onnx_attr_float(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    if (a)
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f = 1,
        a->f = v;
}

void clg__onnx_attr_string(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name,
                           const char *v)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    if (a)
        a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, a->has_s = 1,
        a->s.data = (uint8_t *)v, a->s.len = strlen(v);
}

void clg__onnx_attr_ints(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name, const int64_t *v,
                      size_t count)
{
    Onnx__AttributeProto *a = attr(ex, n, name);
    int64_t *copy = clg__onnx_own(ex, clg__malloc(count * sizeof *copy));
    if (!a || !copy)
        return;
    memcpy(copy, v, count * sizeof *copy);
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->ints = copy, a->n_ints = count;
}

void clg__onnx_initializer(clg__onnx_out *ex, const char *name, const clg_tensor *t,
                           const float *host, const int64_t *dims, size_t ndims)
{
    size_t n = 1;
    for (size_t i = 0; i < ndims; i++)
        n *= (size_t)dims[i];
    Onnx__TensorProto *tp = clg__onnx_own(ex, clg__calloc(1, sizeof *tp));
    float *data = clg__onnx_own(ex, clg__malloc(n ? n * sizeof *data : 1));
    int64_t *d = clg__onnx_own(ex, clg__malloc((ndims ? ndims : 1) * sizeof *d));
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

void clg__onnx_initializer_i64(clg__onnx_out *ex, const char *name, const int64_t *v,
                               const int64_t *dims, size_t ndims)
{
    size_t n = 1;
    for (size_t i = 0; i < ndims; i++)
        n *= (size_t)dims[i];
    Onnx__TensorProto *tp = clg__onnx_own(ex, clg__calloc(1, sizeof *tp));
    int64_t *data = clg__onnx_own(ex, clg__malloc(n ? n * sizeof *data : 1));
    int64_t *d = clg__onnx_own(ex, clg__malloc((ndims ? ndims : 1) * sizeof *d));
    if (!tp || !data || !d)
        return;
    memcpy(data, v, n * sizeof *data);
    memcpy(d, dims, ndims * sizeof *d);
    onnx__tensor_proto__init(tp);
    tp->name = (char *)name;
    tp->dims = d, tp->n_dims = ndims;
    tp->has_data_type = 1, tp->data_type = CLG__ONNX_INT64;
    tp->int64_data = data, tp->n_int64_data = n;
    push(ex, (void ***)&ex->inits, &ex->ninits, &ex->inits_cap, tp);
}

void clg__onnx_more_input(clg__onnx_out *ex, Onnx__NodeProto *n, const char *in)
{
    char **ins = n ? clg__onnx_own(ex, clg__calloc(n->n_input + 1, sizeof *ins)) : NULL;
    if (!ins || !in)
        return;
    memcpy(ins, n->input, n->n_input * sizeof *ins);
    ins[n->n_input++] = (char *)in;
    n->input = ins;
}

const clg__layer *clg__onnx_layer(const clg__onnx_out *ex, size_t i)
{
    return &ex->net->layers[i];
}

const char *clg__onnx_input(const clg__onnx_out *ex, size_t i, size_t k)
{
    size_t from = ex->net->layers[i].from[k];
    return from == CLG_NET_INPUT ? ex->input : ex->net->layers[from].name;
}

static int in_rank2(const clg__onnx_out *ex, size_t i)
{
    size_t from = ex->net->layers[i].from[0];
    return from != CLG_NET_INPUT && ex->rank2[from];
}

void clg__onnx_keep_rank(clg__onnx_out *ex, size_t i)
{
    ex->rank2[i] = in_rank2(ex, i);
}

void clg__onnx_set_rank2(clg__onnx_out *ex, size_t i)
{
    ex->rank2[i] = 1;
}

const char *clg__onnx_flat_input(clg__onnx_out *ex, size_t i)
{
    const char *x = clg__onnx_input(ex, i, 0);
    if (in_rank2(ex, i))
        return x;
    char *flat = clg__onnx_name(ex, ex->net->layers[i].name, ".flat");
    clg__onnx_attr_int(ex, clg__onnx_node(ex, "Flatten", flat, x, NULL, NULL), "axis", 1);
    return flat;
}

void clg__onnx_all_inputs(clg__onnx_out *ex, Onnx__NodeProto *n, size_t i)
{
    const clg__layer *l = &ex->net->layers[i];
    char **ins = clg__onnx_own(ex, clg__calloc(l->nin, sizeof *ins));
    for (size_t k = 0; ins && k < l->nin; k++)
        ins[k] = (char *)clg__onnx_input(ex, i, k);
    if (n && ins)
        n->input = ins, n->n_input = l->nin;
}

