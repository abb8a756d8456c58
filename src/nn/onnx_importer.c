/* The ONNX importer's state and what its operators share (onnx_import_internal.h): the
 * values the graph defines, names, uses, the network text being written, inputs, attributes
 * and initializers recorded for the layers. The driver is onnx_import.c, each operator's
 * translation onnx_ops.c. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_import_internal.h"

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

value *clg__oi_find(importer *im, const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = name_hash(name) % im->cap;; i = (i + 1) % im->cap) {
        if (!im->v[i].name)
            return NULL;
        if (!strcmp(im->v[i].name, name))
            return &im->v[i];
    }
}

/* The slot for name, added (later definitions replace earlier ones). */
value *clg__oi_define(importer *im, const char *name)
{
    size_t i = name_hash(name) % im->cap;
    while (im->v[i].name && strcmp(im->v[i].name, name))
        i = (i + 1) % im->cap;
    memset(&im->v[i], 0, sizeof im->v[i]);
    im->v[i].name = name;
    return &im->v[i];
}

clg_status clg__oi_fail(importer *im, clg_status st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return clg__fail(im->ctx, st, "ONNX import: %s%s%s", im->where, im->where[0] ? ": " : "",
                     msg);
}

clg_status clg__oi_put(importer *im, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(im->text + im->len, im->tcap - im->len, fmt, ap);
        va_end(ap);
        if (k < 0)
            return clg__oi_fail(im, CLG_ERR_INTERNAL, "formatting the network text");
        if ((size_t)k < im->tcap - im->len) {
            im->len += (size_t)k;
            return CLG_OK;
        }
        size_t cap = 2 * im->tcap + (size_t)k;
        char *grown = clg__realloc(im->text, cap);
        if (!grown)
            return clg__oom(im->ctx, "ONNX import");
        im->text = grown, im->tcap = cap;
    }
}

/* The layer name for a node's output tensor (want): the ONNX name where it is a valid and
 * unused layer name or the layer's default "l<position>", else "node<k>". */
/* The slot of layer name `name` in the set of names given: holding it, or empty. */
static char *taken_slot(importer *im, const char *name)
{
    size_t i = name_hash(name) % im->cap;
    while (im->taken[i][0] && strcmp(im->taken[i], name))
        i = (i + 1) % im->cap;
    return im->taken[i];
}

/* How many node inputs and graph outputs read `name` (counted once, in translate). */
size_t clg__oi_uses(const importer *im, const char *name)
{
    for (size_t i = name_hash(name) % im->cap; im->uses[i].name; i = (i + 1) % im->cap)
        if (!strcmp(im->uses[i].name, name))
            return im->uses[i].count;
    return 0;
}

void clg__oi_count_use(importer *im, const char *name, int delta)
{
    size_t i = name_hash(name) % im->cap;
    while (im->uses[i].name && strcmp(im->uses[i].name, name))
        i = (i + 1) % im->cap;
    im->uses[i].name = name;
    im->uses[i].count = (size_t)((long)im->uses[i].count + delta);
}

static void layer_name(importer *im, const char *want, size_t k, char *out)
{
    size_t len = strlen(want);
    char own_default[32];
    snprintf(own_default, sizeof own_default, "l%zu", im->layers + 1);
    if (!strcmp(want, own_default) || im->ended) { /* clgrad's default name for this line;
                                                      the output layer's always */
        snprintf(out, CLG_LAYER_NAME, "%s", own_default);
        return;
    }
    int ok = len > 0 && len < CLG_LAYER_NAME && (isalpha((unsigned char)want[0]) || want[0] == '_');
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)want[i]) || strchr("_-.", want[i]);
    int numbered = want[0] == 'l' && len > 1 && strspn(want + 1, "0123456789") == len - 1;
    ok = ok && strcmp(want, "input") && !numbered;
    ok = ok && !*taken_slot(im, want); /* unused by an earlier layer */
    if (ok)
        snprintf(out, CLG_LAYER_NAME, "%s", want);
    else
        snprintf(out, CLG_LAYER_NAME, "node%zu", k + 1);
}

/* Input k of the node: a layer's output, or (const_ok) a constant. */
clg_status clg__oi_input(importer *im, const Onnx__NodeProto *node, size_t k, int const_ok,
                        value **out)
{
    *out = k < node->n_input ? clg__oi_find(im, node->input[k]) : NULL;
    if (!*out)
        return clg__oi_fail(im, CLG_ERR_CORRUPT, "input %zu (\"%s\") is not defined before the node", k,
                    k < node->n_input ? node->input[k] : "missing");
    if (!(*out)->is_layer && !const_ok)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "input %zu (\"%s\") is a constant; clgrad computes "
                    "this operator on a layer's output only", k, node->input[k]);
    if ((*out)->groups)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "input %zu (\"%s\") is a 5-D view of a "
                            "layer's channels; clgrad reads it only in a channel shuffle", k,
                            node->input[k]);
    if ((*out)->is_layer && const_ok == 2)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "input %zu (\"%s\") must be a constant (an "
                    "initializer): clgrad learns it as a weight", k, node->input[k]);
    return CLG_OK;
}

clg_status clg__oi_record(importer *im, const char *layer, int slot, const Onnx__TensorProto *t,
                         float scale, size_t *at)
{
    if (im->np == im->pcap) {
        size_t cap = im->pcap ? 2 * im->pcap : 16;
        param_rec *grown = clg__realloc(im->p, cap * sizeof *grown);
        if (!grown)
            return clg__oom(im->ctx, "ONNX import");
        im->p = grown, im->pcap = cap;
    }
    param_rec *r = &im->p[im->np];
    memset(r, 0, sizeof *r);
    snprintf(r->layer, sizeof r->layer, "%s", layer);
    r->slot = slot;
    if (t) {
        clg_status st = clg__onnx_floats(im->ctx, t, &r->data, &r->n);
        if (st != CLG_OK)
            return clg__oi_fail(im, st, "%s", clg_ctx_last_error(im->ctx));
        for (size_t i = 0; scale != 1.0f && i < r->n; i++)
            r->data[i] *= scale;
    }
    if (at)
        *at = im->np;
    im->np++;
    return CLG_OK;
}

/* Integer list attribute (ints) into out[0..cap); *n its count (0 when absent). */
clg_status clg__oi_ints(importer *im, const Onnx__NodeProto *node, const char *name, long *out,
                       size_t cap, size_t *n)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    *n = a ? a->n_ints : 0;
    if (*n > cap)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "attribute %s has %zu values; clgrad's 2-D layers "
                    "take at most %zu", name, *n, cap);
    for (size_t i = 0; i < *n; i++) {
        if (a->ints[i] < 0 || a->ints[i] > 1 << 20)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "attribute %s value %lld", name,
                        (long long)a->ints[i]);
        out[i] = (long)a->ints[i];
    }
    return CLG_OK;
}

long clg__oi_int_attr(const Onnx__NodeProto *node, const char *name, long def)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    return a && a->has_i ? (long)a->i : def;
}

clg_status clg__oi_int_list(importer *im, const Onnx__NodeProto *node, size_t k,
                            const char *name, int64_t *out, size_t cap, size_t *n)
{
    *n = 0;
    if (k < node->n_input && node->input[k][0]) {
        value *v;
        clg_status st = clg__oi_input(im, node, k, 2, &v);
        if (st == CLG_OK && (st = clg__onnx_int64s(im->ctx, v->tensor, out, cap, n)) != CLG_OK)
            st = clg__oi_fail(im, st, "%s", clg_ctx_last_error(im->ctx));
        return st;
    }
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    if (a && a->n_ints > cap)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "attribute %s has %zu values, at most %zu "
                            "expected", name, a->n_ints, cap);
    if (a && a->n_ints)
        memcpy(out, a->ints, (*n = a->n_ints) * sizeof *out);
    return CLG_OK;
}

void clg__oi_string_attr(const Onnx__NodeProto *node, const char *name, const char *def,
                         char *out, size_t cap)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    if (a && a->has_s)
        snprintf(out, cap, "%.*s", (int)(a->s.len < cap - 1 ? a->s.len : cap - 1),
                 (const char *)a->s.data);
    else
        snprintf(out, cap, "%s", def);
}

float clg__oi_float_attr(const Onnx__NodeProto *node, const char *name, float def)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    return a && a->has_f ? a->f : def;
}

/* Refuses attributes other than the listed ones (comma-separated). */
clg_status clg__oi_known_attrs(importer *im, const Onnx__NodeProto *node, const char *known)
{
    for (size_t i = 0; i < node->n_attribute; i++) {
        const char *name = node->attribute[i]->name ? node->attribute[i]->name : "";
        size_t len = strlen(name);
        int ok = 0;
        for (const char *k = known; *k && !ok; k += strcspn(k, ",") + (k[strcspn(k, ",")] == ','))
            ok = strcspn(k, ",") == len && !strncmp(k, name, len);
        if (!ok)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "attribute \"%s\" is not one clgrad has (it "
                        "reads %s)", name, known);
    }
    return CLG_OK;
}

/* Writes "<line> name=NAME from=IN" and makes `tensor` that layer. */
static clg_status write_layer(importer *im, const char *tensor, size_t k, const char *from,
                              char *name, const char *line)
{
    layer_name(im, tensor, k, name);
    char own_default[32];
    snprintf(own_default, sizeof own_default, "l%zu", im->layers + 1);
    clg_status st = strcmp(name, own_default)
                        ? clg__oi_put(im, "%s%s name=%s from=%s\n", line, im->fuse_relu ? " relu=1" : "",
                              name, from)
                        : clg__oi_put(im, "%s%s from=%s\n", line, im->fuse_relu ? " relu=1" : "", from);
    im->layers++;
    if (st != CLG_OK)
        return st;
    snprintf(taken_slot(im, name), CLG_LAYER_NAME, "%s", name);
    value *out = clg__oi_define(im, tensor);
    out->is_layer = 1;
    snprintf(out->layer, sizeof out->layer, "%s", name);
    im->last = out->layer;
    return CLG_OK;
}

/* Writes "<line> name=NAME from=IN" and makes the node's first output that layer (or, with
 * fuse_relu, the output of the Relu that follows it). */
clg_status clg__oi_layer(importer *im, const Onnx__NodeProto *node, size_t k, const char *from,
                        char *name, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const char *tensor =
        im->fuse_relu || im->fuse_gate ? im->g->node[k + 1]->output[0] : node->output[0];
    return write_layer(im, tensor, k, from, name, line);
}

clg_status clg__oi_layer_as(importer *im, const char *tensor, size_t k, const char *from,
                            char *name, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return write_layer(im, tensor, k, from, name, line);
}

/* Makes the node's output another name for its input (Flatten, Identity, ...). */
void clg__oi_alias(importer *im, const Onnx__NodeProto *node, const value *in, int flat)
{
    value copy = *in;
    value *out = clg__oi_define(im, node->output[0]);
    const char *name = out->name;
    *out = copy;
    out->name = name;
    out->flat = copy.flat || flat;
    out->bias_open = 0;
}

clg_status clg__oi_part(importer *im, size_t k, const char *from, char *name, const char *fmt, ...)
{
    char line[CLG_LAYER_INPUTS * CLG_LAYER_NAME + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (size_t j = 1;; j++) { /* a name no layer has */
        snprintf(name, CLG_LAYER_NAME, "node%zu_part%zu", k + 1, j);
        if (!*taken_slot(im, name))
            break;
    }
    clg_status st = clg__oi_put(im, "%s name=%s from=%s\n", line, name, from);
    im->layers++;
    if (st == CLG_OK)
        snprintf(taken_slot(im, name), CLG_LAYER_NAME, "%s", name);
    return st;
}

/* A tensor the importer made (a Constant's value_float, a folded shape), freed with it: the
 * TensorProto, its dims, then its data (8 bytes an element, float or int64). */
typedef struct made_tensor {
    Onnx__TensorProto t;
    int64_t dims[CLG__ONNX_MAX_DIMS];
    int64_t data[];
} made_tensor;

Onnx__TensorProto *clg__oi_make_tensor(importer *im, const char *name, int type,
                                       const int64_t *dims, size_t ndims)
{
    size_t n = 1;
    for (size_t i = 0; i < ndims; i++)
        n *= dims[i] > 0 ? (size_t)dims[i] : 0;
    if (ndims > CLG__ONNX_MAX_DIMS || n > 4096)
        return NULL;
    if (im->nmade == im->madecap) {
        size_t cap = im->madecap ? 2 * im->madecap : 8;
        void **grown = clg__realloc(im->made, cap * sizeof *grown);
        if (!grown)
            return NULL;
        im->made = grown, im->madecap = cap;
    }
    made_tensor *m = clg__calloc(1, sizeof *m + (n ? n : 1) * sizeof(int64_t));
    if (!m)
        return NULL;
    im->made[im->nmade++] = m;
    onnx__tensor_proto__init(&m->t);
    m->t.name = (char *)name;
    m->t.has_data_type = 1, m->t.data_type = type;
    if (ndims)
        memcpy(m->dims, dims, ndims * sizeof *dims);
    m->t.dims = m->dims, m->t.n_dims = ndims;
    if (type == CLG__ONNX_FLOAT)
        m->t.float_data = (float *)(void *)m->data, m->t.n_float_data = n;
    else
        m->t.int64_data = m->data, m->t.n_int64_data = n;
    return &m->t;
}
