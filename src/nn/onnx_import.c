/* ONNX import: the model's graph becomes clgrad's network text (one line per layer, named
 * and wired with from=), parsed as any network file is, then the initializers go into the
 * layers' parameters bit for bit. Whatever clgrad cannot express is refused before anything
 * is built, naming the node, its operator and what is missing. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/nn_internal.h"
#include "nn/onnx_internal.h"

/* What an ONNX tensor name stands for here. */
typedef struct value {
    const char *name;            /* borrowed from the model */
    int is_layer;                /* a layer's output (or the input), else a constant */
    char layer[CLG_LAYER_NAME];  /* the layer's name ("input" for the network's input) */
    const Onnx__TensorProto *tensor; /* a constant's */
    int flat;                    /* the layer's output seen flattened (Flatten, Reshape) */
    size_t fc_pending;           /* 1 + the parameter record of a MatMul's fc, whose bias a
                                    following Add of a constant may fill; else 0 */
} value;

/* A tensor for a layer's parameter or state, uploaded once the network is built. */
typedef struct param_rec {
    char layer[CLG_LAYER_NAME];
    int slot;                    /* 0, 1: param[slot]; 2, 3: state[slot - 2] */
    float *data;                 /* owned */
    size_t n;
} param_rec;

typedef struct importer {
    clg_ctx *ctx;
    const Onnx__GraphProto *g;
    const clg__onnx_const *extra; /* caller's constants (conformance tests' inputs) */
    size_t nextra;
    value *v;                    /* open addressing on the name's hash */
    size_t cap, count;
    param_rec *p;
    size_t np, pcap;
    char *text;
    size_t len, tcap;
    const char *last;            /* the last layer written */
    size_t layers;               /* layers written */
    int fuse_relu;               /* the Add being written takes the Relu after it */
    int ended;                   /* a Softmax was written */
    char where[160];             /* "node 3 (Conv \"conv1\")" for errors */
} importer;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static value *find(importer *im, const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = hash(name) % im->cap;; i = (i + 1) % im->cap) {
        if (!im->v[i].name)
            return NULL;
        if (!strcmp(im->v[i].name, name))
            return &im->v[i];
    }
}

/* The slot for name, added (later definitions replace earlier ones). */
static value *define(importer *im, const char *name)
{
    size_t i = hash(name) % im->cap;
    while (im->v[i].name && strcmp(im->v[i].name, name))
        i = (i + 1) % im->cap;
    if (!im->v[i].name)
        im->count++;
    memset(&im->v[i], 0, sizeof im->v[i]);
    im->v[i].name = name;
    return &im->v[i];
}

static clg_status fail(importer *im, clg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static clg_status fail(importer *im, clg_status st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return clg__fail(im->ctx, st, "ONNX import: %s%s%s", im->where, im->where[0] ? ": " : "",
                     msg);
}

static clg_status put(importer *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static clg_status put(importer *im, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(im->text + im->len, im->tcap - im->len, fmt, ap);
        va_end(ap);
        if (k < 0)
            return fail(im, CLG_ERR_INTERNAL, "formatting the network text");
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
    for (size_t i = 0; ok && i < im->cap; i++) /* unused by an earlier layer */
        ok = !(im->v[i].name && im->v[i].is_layer && !strcmp(im->v[i].layer, want));
    if (ok)
        snprintf(out, CLG_LAYER_NAME, "%s", want);
    else
        snprintf(out, CLG_LAYER_NAME, "node%zu", k + 1);
}

/* Input k of the node: a layer's output, or (const_ok) a constant. */
static clg_status input(importer *im, const Onnx__NodeProto *node, size_t k, int const_ok,
                        value **out)
{
    *out = k < node->n_input ? find(im, node->input[k]) : NULL;
    if (!*out)
        return fail(im, CLG_ERR_CORRUPT, "input %zu (\"%s\") is not defined before the node", k,
                    k < node->n_input ? node->input[k] : "missing");
    if (!(*out)->is_layer && !const_ok)
        return fail(im, CLG_ERR_UNSUPPORTED, "input %zu (\"%s\") is a constant; clgrad computes "
                    "this operator on a layer's output only", k, node->input[k]);
    if ((*out)->is_layer && const_ok == 2)
        return fail(im, CLG_ERR_UNSUPPORTED, "input %zu (\"%s\") must be a constant (an "
                    "initializer): clgrad learns it as a weight", k, node->input[k]);
    return CLG_OK;
}

static clg_status record(importer *im, const char *layer, int slot, const Onnx__TensorProto *t,
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
            return fail(im, st, "%s", clg_ctx_last_error(im->ctx));
        for (size_t i = 0; scale != 1.0f && i < r->n; i++)
            r->data[i] *= scale;
    }
    if (at)
        *at = im->np;
    im->np++;
    return CLG_OK;
}

/* Integer list attribute (ints) into out[0..cap); *n its count (0 when absent). */
static clg_status ints(importer *im, const Onnx__NodeProto *node, const char *name, long *out,
                       size_t cap, size_t *n)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    *n = a ? a->n_ints : 0;
    if (*n > cap)
        return fail(im, CLG_ERR_UNSUPPORTED, "attribute %s has %zu values; clgrad's 2-D layers "
                    "take at most %zu", name, *n, cap);
    for (size_t i = 0; i < *n; i++) {
        if (a->ints[i] < 0 || a->ints[i] > 1 << 20)
            return fail(im, CLG_ERR_UNSUPPORTED, "attribute %s value %lld", name,
                        (long long)a->ints[i]);
        out[i] = (long)a->ints[i];
    }
    return CLG_OK;
}

static long int_attr(const Onnx__NodeProto *node, const char *name, long def)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    return a && a->has_i ? (long)a->i : def;
}

static float float_attr(const Onnx__NodeProto *node, const char *name, float def)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, name);
    return a && a->has_f ? a->f : def;
}

/* Refuses attributes other than the listed ones (comma-separated). */
static clg_status known_attrs(importer *im, const Onnx__NodeProto *node, const char *known)
{
    for (size_t i = 0; i < node->n_attribute; i++) {
        const char *name = node->attribute[i]->name ? node->attribute[i]->name : "";
        size_t len = strlen(name);
        int ok = 0;
        for (const char *k = known; *k && !ok; k += strcspn(k, ",") + (k[strcspn(k, ",")] == ','))
            ok = strcspn(k, ",") == len && !strncmp(k, name, len);
        if (!ok)
            return fail(im, CLG_ERR_UNSUPPORTED, "attribute \"%s\" is not one clgrad has (it "
                        "reads %s)", name, known);
    }
    return CLG_OK;
}

/* Writes "<line> name=NAME from=IN" and makes the node's first output that layer (or, with
 * fuse_relu, the output of the Relu that follows it). */
static clg_status layer(importer *im, const Onnx__NodeProto *node, size_t k, const char *from,
                        char *name, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static clg_status layer(importer *im, const Onnx__NodeProto *node, size_t k, const char *from,
                        char *name, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const char *tensor = im->fuse_relu ? im->g->node[k + 1]->output[0] : node->output[0];
    layer_name(im, tensor, k, name);
    char own_default[32];
    snprintf(own_default, sizeof own_default, "l%zu", im->layers + 1);
    clg_status st = strcmp(name, own_default)
                        ? put(im, "%s%s name=%s from=%s\n", line, im->fuse_relu ? " relu=1" : "",
                              name, from)
                        : put(im, "%s%s from=%s\n", line, im->fuse_relu ? " relu=1" : "", from);
    im->layers++;
    if (st != CLG_OK)
        return st;
    value *out = define(im, tensor);
    out->is_layer = 1;
    snprintf(out->layer, sizeof out->layer, "%s", name);
    im->last = out->layer;
    return CLG_OK;
}

/* Makes the node's output another name for its input (Flatten, Identity, ...). */
static void alias(importer *im, const Onnx__NodeProto *node, const value *in, int flat)
{
    value copy = *in;
    value *out = define(im, node->output[0]);
    const char *name = out->name;
    *out = copy;
    out->name = name;
    out->flat = copy.flat || flat;
    out->fc_pending = 0;
}

/* Conv's or a pool's pads "T,B,L,R" from ONNX's (x1_begin, x2_begin, x1_end, x2_end), or
 * from auto_pad for the given input size (SAME_*: output = ceil(input / stride)). */
static clg_status pads(importer *im, const Onnx__NodeProto *node, const long k[2],
                       const long stride[2], const long dil[2], char *out, size_t cap)
{
    long p[4] = {0, 0, 0, 0};
    size_t n;
    clg_status st = ints(im, node, "pads", p, 4, &n);
    if (st != CLG_OK)
        return st;
    if (n && n != 4)
        return fail(im, CLG_ERR_UNSUPPORTED, "pads has %zu values; 2-D layers take 4", n);
    const Onnx__AttributeProto *a = clg__onnx_attr(node, "auto_pad");
    char mode[16] = "NOTSET";
    if (a && a->has_s)
        snprintf(mode, sizeof mode, "%.*s", (int)(a->s.len < 15 ? a->s.len : 15),
                 (const char *)a->s.data);
    (void)k, (void)stride, (void)dil;
    if (!strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER")) { /* from the input size */
        snprintf(out, cap, "pad=%s", mode[5] == 'U' ? "same" : "same-lower");
        return CLG_OK;
    } else if (strcmp(mode, "NOTSET") && strcmp(mode, "VALID")) {
        return fail(im, CLG_ERR_UNSUPPORTED, "auto_pad \"%s\"", mode);
    } else if (!strcmp(mode, "VALID")) {
        p[0] = p[1] = p[2] = p[3] = 0;
    }
    snprintf(out, cap, "pad=%ld,%ld,%ld,%ld", p[0], p[2], p[1], p[3]); /* T,B,L,R */
    return CLG_OK;
}

static clg_status conv(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x, *w, *b = NULL;
    clg_status st = known_attrs(im, node, "kernel_shape,strides,pads,dilations,group,auto_pad");
    if (st == CLG_OK)
        st = input(im, node, 0, 0, &x);
    if (st == CLG_OK)
        st = input(im, node, 1, 2, &w);
    if (st == CLG_OK && node->n_input > 2 && node->input[2][0])
        st = input(im, node, 2, 2, &b);
    if (st != CLG_OK)
        return st;
    const Onnx__TensorProto *wt = w->tensor;
    if (wt->n_dims != 4)
        return fail(im, CLG_ERR_UNSUPPORTED, "a %zu-D convolution (clgrad's are 2-D)",
                    wt->n_dims - 2 > 0 ? wt->n_dims - 2 : 0);
    long ksz[2] = {(long)wt->dims[2], (long)wt->dims[3]}, stride[2] = {1, 1}, dil[2] = {1, 1};
    long ks[2];
    size_t n;
    if ((st = ints(im, node, "kernel_shape", ks, 2, &n)) != CLG_OK)
        return st;
    if (n == 2 && (ks[0] != ksz[0] || ks[1] != ksz[1]))
        return fail(im, CLG_ERR_CORRUPT, "kernel_shape %ldx%ld against weights of %ldx%ld",
                    ks[0], ks[1], ksz[0], ksz[1]);
    if ((st = ints(im, node, "strides", stride, 2, &n)) != CLG_OK ||
        (st = ints(im, node, "dilations", dil, 2, &n)) != CLG_OK)
        return st;
    char pad[96];
    if ((st = pads(im, node, ksz, stride, dil, pad, sizeof pad)) != CLG_OK)
        return st;
    long group = int_attr(node, "group", 1);
    char name[CLG_LAYER_NAME];
    st = layer(im, node, k, x->layer, name, "conv %ldx%ldx%lld %s stride=%ld,%ld dilation=%ld,%ld "
               "groups=%ld bias=%d", ksz[0], ksz[1], (long long)wt->dims[0], pad, stride[0],
               stride[1], dil[0], dil[1], group, b != NULL);
    if (st == CLG_OK)
        st = record(im, name, 0, wt, 1.0f, NULL);
    if (st == CLG_OK && b)
        st = record(im, name, 1, b->tensor, 1.0f, NULL);
    return st;
}

static clg_status pool(importer *im, const Onnx__NodeProto *node, size_t k, int max)
{
    value *x;
    clg_status st = known_attrs(im, node, max ? "kernel_shape,strides,pads,ceil_mode,auto_pad,"
                                                "dilations,storage_order"
                                              : "kernel_shape,strides,pads,ceil_mode,auto_pad,"
                                                "count_include_pad");
    if (st == CLG_OK)
        st = input(im, node, 0, 0, &x);
    if (st != CLG_OK)
        return st;
    if (node->n_output > 1 && node->output[1][0])
        return fail(im, CLG_ERR_UNSUPPORTED, "MaxPool's Indices output");
    long ks[2], stride[2] = {1, 1}, dil[2] = {1, 1};
    size_t n;
    if ((st = ints(im, node, "kernel_shape", ks, 2, &n)) != CLG_OK)
        return st;
    if (n != 2)
        return fail(im, CLG_ERR_UNSUPPORTED, "a %zu-D pooling (clgrad's are 2-D)", n);
    if ((st = ints(im, node, "strides", stride, 2, &n)) != CLG_OK ||
        (st = ints(im, node, "dilations", dil, 2, &n)) != CLG_OK)
        return st;
    if (dil[0] != 1 || dil[1] != 1)
        return fail(im, CLG_ERR_UNSUPPORTED, "dilated pooling");
    if (int_attr(node, "storage_order", 0) != 0)
        return fail(im, CLG_ERR_UNSUPPORTED, "storage_order 1 (column-major indices)");
    char pad[96];
    if ((st = pads(im, node, ks, stride, dil, pad, sizeof pad)) != CLG_OK)
        return st;
    char name[CLG_LAYER_NAME];
    return layer(im, node, k, x->layer, name, "%s %ldx%ld stride=%ld,%ld %s ceil=%ld%s",
                 max ? "maxpool" : "avgpool", ks[0], ks[1], stride[0], stride[1], pad,
                 int_attr(node, "ceil_mode", 0) ? 1L : 0L,
                 max ? "" : int_attr(node, "count_include_pad", 0) ? " exclude-pad=0"
                                                                    : " exclude-pad=1");
}

/* Gemm (transA 0) and MatMul with a constant right side: fc. Its weights stored M x K. */
static clg_status fully_connected(importer *im, const Onnx__NodeProto *node, size_t k, int gemm)
{
    value *a, *b, *c = NULL;
    clg_status st = known_attrs(im, node, gemm ? "alpha,beta,transA,transB" : "");
    if (st == CLG_OK)
        st = input(im, node, 0, 0, &a);
    if (st == CLG_OK)
        st = input(im, node, 1, 2, &b);
    if (st == CLG_OK && gemm && node->n_input > 2 && node->input[2][0])
        st = input(im, node, 2, 2, &c);
    if (st != CLG_OK)
        return st;
    if (gemm && int_attr(node, "transA", 0))
        return fail(im, CLG_ERR_UNSUPPORTED, "transA 1 (the layer's input transposed)");
    const Onnx__TensorProto *bt = b->tensor;
    if (bt->n_dims != 2)
        return fail(im, CLG_ERR_UNSUPPORTED, "a %zu-D weight (fully connected layers take 2-D)",
                    bt->n_dims);
    int trans = gemm && int_attr(node, "transB", 0);
    size_t outs = (size_t)bt->dims[trans ? 0 : 1], ins = (size_t)bt->dims[trans ? 1 : 0];
    char name[CLG_LAYER_NAME];
    st = layer(im, node, k, a->layer, name, "fc %zu", outs);
    size_t at;
    if (st == CLG_OK)
        st = record(im, name, 0, bt, gemm ? float_attr(node, "alpha", 1.0f) : 1.0f, &at);
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
        st = record(im, name, 1, c->tensor, float_attr(node, "beta", 1.0f), NULL);
        if (st == CLG_OK && im->p[im->np - 1].n != outs)
            return fail(im, CLG_ERR_UNSUPPORTED, "bias C of %zu values for %zu outputs (clgrad "
                        "adds one per output, no other broadcast)", im->p[im->np - 1].n, outs);
    }
    if (st == CLG_OK && !c) /* MatMul: a following Add of a constant may bring the bias */
        find(im, node->output[0])->fc_pending = 1 + im->np;
    return st;
}

static clg_status batchnorm(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x, *v[4];
    clg_status st = known_attrs(im, node, "epsilon,momentum,spatial,training_mode,is_test");
    if (st == CLG_OK)
        st = input(im, node, 0, 0, &x);
    for (size_t i = 0; st == CLG_OK && i < 4; i++)
        st = input(im, node, i + 1, 2, &v[i]);
    if (st != CLG_OK)
        return st;
    if (int_attr(node, "training_mode", 0) || !int_attr(node, "is_test", 1) ||
        (node->n_output > 1 && node->output[1][0]))
        return fail(im, CLG_ERR_UNSUPPORTED, "the training form (running statistics as "
                    "outputs); clgrad imports the inference form and trains it itself");
    if (int_attr(node, "spatial", 1) != 1)
        return fail(im, CLG_ERR_UNSUPPORTED, "spatial 0 (statistics per element)");
    /* ONNX keeps momentum of the running statistics, clgrad the new batch's weight */
    char name[CLG_LAYER_NAME];
    st = layer(im, node, k, x->layer, name, "batchnorm momentum=%.7g eps=%.9g", /* 1 - float: 7 */
               1.0 - (double)float_attr(node, "momentum", 0.9f),
               (double)float_attr(node, "epsilon", 1e-5f));
    for (int i = 0; st == CLG_OK && i < 4; i++) /* scale, B, mean, var */
        st = record(im, name, i, v[i]->tensor, 1.0f, NULL);
    return st;
}

/* Add: of two layers' outputs (add), or of a constant bias onto a MatMul's fc. */
static clg_status add(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *a, *b;
    clg_status st = known_attrs(im, node, "");
    if (st == CLG_OK)
        st = input(im, node, 0, 1, &a);
    if (st == CLG_OK)
        st = input(im, node, 1, 1, &b);
    if (st != CLG_OK)
        return st;
    if (a->is_layer && b->is_layer) {
        char name[CLG_LAYER_NAME];
        return layer(im, node, k, a->layer, name, "add %s", b->layer);
    }
    value *fc = a->is_layer ? a : b, *bias = a->is_layer ? b : a;
    if (!fc->is_layer || !fc->fc_pending)
        return fail(im, CLG_ERR_UNSUPPORTED, "a constant added to a layer's output (clgrad "
                    "adds a constant only as the bias of a MatMul before it)");
    st = record(im, fc->layer, 1, bias->tensor, 1.0f, NULL); /* its length checked in fill */
    alias(im, node, fc, 0);
    return st;
}

/* Concat (channels) or Sum (of layers' outputs): "concat b,c" / "add b,c" from the first. */
static clg_status concat(importer *im, const Onnx__NodeProto *node, size_t k, int sum)
{
    clg_status st = known_attrs(im, node, sum ? "" : "axis");
    long axis = int_attr(node, "axis", 1);
    if (st == CLG_OK && !sum && axis != 1 && axis != -3)
        return fail(im, CLG_ERR_UNSUPPORTED, "axis %ld (clgrad concatenates channels: 1)", axis);
    if (node->n_input < 2 || node->n_input > CLG_LAYER_INPUTS)
        return fail(im, CLG_ERR_UNSUPPORTED, "%zu inputs (2 to %d)", node->n_input,
                    CLG_LAYER_INPUTS);
    char rest[CLG_LAYER_INPUTS * CLG_LAYER_NAME] = "";
    value *first = NULL;
    size_t len = 0;
    for (size_t i = 0; st == CLG_OK && i < node->n_input; i++) {
        value *in;
        st = input(im, node, i, 0, &in);
        if (st == CLG_OK && i == 0)
            first = in;
        else if (st == CLG_OK)
            len += (size_t)snprintf(rest + len, sizeof rest - len, "%s%s", i > 1 ? "," : "",
                                    in->layer);
    }
    char name[CLG_LAYER_NAME];
    return st == CLG_OK ? layer(im, node, k, first->layer, name, "%s %s", sum ? "add" : "concat",
                                rest)
                        : st;
}

/* Reshape to (N, everything else): clgrad's fully connected layers flatten themselves. */
static clg_status reshape(importer *im, const Onnx__NodeProto *node)
{
    value *x, *shape;
    clg_status st = known_attrs(im, node, "allowzero");
    if (st == CLG_OK)
        st = input(im, node, 0, 0, &x);
    if (st == CLG_OK)
        st = input(im, node, 1, 2, &shape);
    int64_t s[CLG__ONNX_MAX_DIMS];
    size_t n = 0;
    if (st == CLG_OK)
        st = clg__onnx_int64s(im->ctx, shape->tensor, s, CLG__ONNX_MAX_DIMS, &n);
    if (st != CLG_OK)
        return st;
    if (n != 2 || !(s[0] == 0 || s[0] == -1 || s[0] > 0) || !(s[1] == -1 || s[1] > 0) ||
        (s[0] == -1 && s[1] == -1))
        return fail(im, CLG_ERR_UNSUPPORTED, "a reshape other than a flatten to (N, -1)");
    alias(im, node, x, 1);
    return CLG_OK;
}

static clg_status activation(importer *im, const Onnx__NodeProto *node, size_t k,
                             const char *line, const char *attrs)
{
    value *x;
    clg_status st = known_attrs(im, node, attrs);
    if (st == CLG_OK)
        st = input(im, node, 0, 0, &x);
    char name[CLG_LAYER_NAME];
    return st == CLG_OK ? layer(im, node, k, x->layer, name, "%s", line) : st;
}

static clg_status node_to_layer(importer *im, const Onnx__NodeProto *node, size_t k)
{
    const char *op = node->op_type ? node->op_type : "";
    char line[64];
    value *x;
    clg_status st;
    if (node->domain && node->domain[0] && strcmp(node->domain, "ai.onnx"))
        return fail(im, CLG_ERR_UNSUPPORTED, "operator domain \"%s\" (clgrad reads ONNX's own "
                    "operators)", node->domain);
    if (!node->n_output || !node->output[0][0])
        return fail(im, CLG_ERR_CORRUPT, "no output");
    if (im->ended)
        return fail(im, CLG_ERR_UNSUPPORTED, "an operator after the Softmax (clgrad's softmax "
                    "is the network's output, its last layer)");
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
    if (!strcmp(op, "Relu") || !strcmp(op, "Sigmoid") || !strcmp(op, "Tanh"))
        return activation(im, node, k, op[0] == 'R' ? "relu" : op[0] == 'S' ? "sigmoid" : "tanh",
                          "");
    if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Elu")) {
        int leaky = op[0] == 'L';
        snprintf(line, sizeof line, "%s alpha=%.9g", leaky ? "leaky" : "elu",
                 (double)float_attr(node, "alpha", leaky ? 0.01f : 1.0f));
        return activation(im, node, k, line, "alpha");
    }
    if (!strcmp(op, "Add"))
        return add(im, node, k);
    if (!strcmp(op, "Concat") || !strcmp(op, "Sum"))
        return concat(im, node, k, op[0] == 'S');
    if (!strcmp(op, "Flatten") || !strcmp(op, "Identity")) {
        st = known_attrs(im, node, "axis");
        if (st == CLG_OK && op[0] == 'F' && int_attr(node, "axis", 1) != 1)
            return fail(im, CLG_ERR_UNSUPPORTED, "axis %ld (clgrad flattens to (N, rest): 1)",
                        int_attr(node, "axis", 1));
        if (st == CLG_OK)
            st = input(im, node, 0, 0, &x);
        if (st == CLG_OK)
            alias(im, node, x, op[0] == 'F');
        return st;
    }
    if (!strcmp(op, "Reshape"))
        return reshape(im, node);
    if (!strcmp(op, "Dropout")) {
        float ratio = float_attr(node, "ratio", 0.5f);
        value *r = NULL;
        st = known_attrs(im, node, "ratio,seed,is_test");
        if (st == CLG_OK && node->n_input > 1 && node->input[1][0]) /* opset 12: an input */
            st = input(im, node, 1, 2, &r);
        float *rv = NULL;
        size_t n = 0;
        if (st == CLG_OK && r && (st = clg__onnx_floats(im->ctx, r->tensor, &rv, &n)) == CLG_OK) {
            if (n != 1)
                st = fail(im, CLG_ERR_UNSUPPORTED, "a ratio of %zu values", n);
            else
                ratio = rv[0];
        }
        free(rv);
        if (st == CLG_OK && node->n_input > 2 && node->input[2][0])
            return fail(im, CLG_ERR_UNSUPPORTED, "the training_mode input (clgrad drops out "
                        "while training only)");
        if (st != CLG_OK)
            return st;
        if (!(ratio >= 0.0f && ratio < 1.0f))
            return fail(im, CLG_ERR_UNSUPPORTED, "ratio %g", (double)ratio);
        snprintf(line, sizeof line, "dropout %.9g", (double)ratio);
        return activation(im, node, k, line, "ratio,seed,is_test");
    }
    if (!strcmp(op, "Softmax")) {
        st = known_attrs(im, node, "axis");
        if (st == CLG_OK)
            st = input(im, node, 0, 0, &x);
        long axis = int_attr(node, "axis", -1);
        if (st == CLG_OK && !x->flat && axis != 1 && axis != -1)
            return fail(im, CLG_ERR_UNSUPPORTED, "axis %ld (clgrad's softmax is over each "
                        "sample's values)", axis);
        im->ended = st == CLG_OK;
        return st == CLG_OK ? activation(im, node, k, "softmax", "axis") : st;
    }
    return fail(im, CLG_ERR_UNSUPPORTED, "clgrad has no layer for this operator (it imports "
                "Conv, MaxPool, AveragePool, GlobalAveragePool, Gemm, MatMul, "
                "BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh, Add, Sum, Concat, Flatten, "
                "Reshape as a flatten, Dropout, Identity, Softmax)");
}

/* Whether node k is an Add or Sum of layers that the next node, a Relu, alone reads: clgrad's
 * "add ... relu=1". */
static int fuses_relu(const importer *im, size_t k)
{
    const Onnx__GraphProto *g = im->g;
    const Onnx__NodeProto *a = g->node[k], *r = k + 1 < g->n_node ? g->node[k + 1] : NULL;
    if (!r || !a->op_type || !r->op_type || (strcmp(a->op_type, "Add") && strcmp(a->op_type, "Sum")) ||
        strcmp(r->op_type, "Relu") || r->n_input != 1 || a->n_output != 1 || r->n_output < 1 ||
        strcmp(r->input[0], a->output[0]) || r->n_attribute)
        return 0;
    for (size_t i = 0; i < a->n_input; i++) { /* of layers, not a MatMul's bias */
        value *v = find((importer *)im, a->input[i]);
        if (!v || !v->is_layer)
            return 0;
    }
    size_t uses = 0;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i]->n_input; j++)
            uses += !strcmp(g->node[i]->input[j], a->output[0]);
    for (size_t i = 0; i < g->n_output; i++)
        uses += g->output[i]->name && !strcmp(g->output[i]->name, a->output[0]);
    return uses == 1;
}

/* The graph's one computed input: 4-D float N x C x H x W (or N x C x W as 1 row). */
static clg_status network_input(importer *im)
{
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < im->g->n_input; i++) {
        const char *name = im->g->input[i]->name;
        value *v = find(im, name);
        if (v && !v->is_layer)
            continue; /* an initializer listed as an input (older exporters) */
        if (in)
            return fail(im, CLG_ERR_UNSUPPORTED, "inputs \"%s\" and \"%s\": clgrad's networks "
                        "take one", in->name, name);
        in = im->g->input[i];
    }
    if (!in || !in->name)
        return fail(im, CLG_ERR_CORRUPT, "the graph has no input");
    const Onnx__TypeProto *t = in->type;
    const Onnx__TypeProto__Tensor *tt = t ? t->tensor_type : NULL;
    const Onnx__TensorShapeProto *s = tt ? tt->shape : NULL;
    if (!tt || (tt->has_elem_type && tt->elem_type != CLG__ONNX_FLOAT) || !s || s->n_dim != 4)
        return fail(im, CLG_ERR_UNSUPPORTED, "input \"%s\" is not a 4-D float tensor (N x C x H "
                    "x W)", in->name);
    long d[3];
    for (int i = 0; i < 3; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = s->dim[i + 1];
        if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
            dim->dim_value < 1 || dim->dim_value > 1 << 20)
            return fail(im, CLG_ERR_UNSUPPORTED, "input \"%s\": dimension %d must be a fixed "
                        "size", in->name, i + 1);
        d[i] = (long)dim->dim_value;
    }
    value *v = define(im, in->name);
    v->is_layer = 1;
    snprintf(v->layer, sizeof v->layer, "input");
    im->last = v->layer;
    return put(im, "input %ldx%ldx%ld\n", d[1], d[2], d[0]);
}

static int opset_ok(importer *im, const Onnx__ModelProto *m, long *version)
{
    *version = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *domain = m->opset_import[i]->domain;
        if ((!domain || !domain[0] || !strcmp(domain, "ai.onnx")) &&
            m->opset_import[i]->has_version)
            *version = (long)m->opset_import[i]->version;
    }
    (void)im;
    return *version >= 6 && *version <= 17;
}

/* Uploads the recorded tensors into the built network's layers. */
static clg_status fill(importer *im, clg_net *net)
{
    for (size_t i = 0; i < im->np; i++) {
        const param_rec *r = &im->p[i];
        size_t at = clg__net_find(net, r->layer, strlen(r->layer));
        clg__layer *l = at == CLG__NOT_FOUND ? NULL : &net->layers[at];
        clg_tensor *t = !l ? NULL : r->slot < 2 ? (r->slot < (int)l->nparams ? l->param[r->slot] : NULL)
                                                : l->state[r->slot - 2];
        if (!t)
            return clg__fail(im->ctx, CLG_ERR_INTERNAL, "ONNX import: layer %s has no tensor %d",
                             r->layer, r->slot);
        if (clg_tensor_numel(t) != r->n)
            return clg__fail(im->ctx, CLG_ERR_CORRUPT, "ONNX import: layer %s (%s) takes %zu "
                             "values for its %s, the model holds %zu", r->layer,
                             clg__layer_def_of(l->kind)->keywords[0], clg_tensor_numel(t),
                             r->slot == 0 ? "weights" : r->slot == 1 ? "bias or shift"
                                                      : r->slot == 2 ? "running mean"
                                                                     : "running variance",
                             r->n);
        clg_status st = clg_tensor_upload(t, r->data, r->n);
        if (st != CLG_OK)
            return st;
    }
    return CLG_OK;
}

/* Class names a clgrad export left in the metadata. */
static clg_status classes(importer *im, const Onnx__ModelProto *m, clg_net *net)
{
    for (size_t i = 0; i < m->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *e = m->metadata_props[i];
        if (!e->key || strcmp(e->key, "clgrad.classes") || !e->value)
            continue;
        size_t k = clg_net_class_count(net), n = 0;
        const char **names = clg__calloc(k ? k : 1, sizeof *names);
        char *copy = clg__strdup(e->value);
        if (!names || !copy) {
            free(names), free(copy);
            return clg__oom(im->ctx, "ONNX import");
        }
        for (char *s = copy, *nl; s && n < k; s = nl ? nl + 1 : NULL) {
            nl = strchr(s, '\n');
            if (nl)
                *nl = '\0';
            names[n++] = s;
        }
        clg_status st = n == k ? clg_net_set_class_names(net, names, k) : CLG_OK;
        free(names), free(copy);
        return st;
    }
    return CLG_OK;
}

/* The model as network text and parameter records in im (set up with ctx, extras). */
static clg_status translate(importer *im, const Onnx__ModelProto *m)
{
    const Onnx__GraphProto *g = m->graph;
    im->g = g;
    long version;
    if (!opset_ok(im, m, &version))
        return fail(im, CLG_ERR_UNSUPPORTED, "opset %ld (clgrad reads 6 to 17)", version);
    if (g->n_node > CLG__ONNX_MAX_NODES || g->n_initializer > CLG__ONNX_MAX_NODES ||
        g->n_input > CLG__ONNX_MAX_NODES)
        return fail(im, CLG_ERR_UNSUPPORTED, "%zu nodes, %zu initializers (at most %d each)",
                    g->n_node, g->n_initializer, CLG__ONNX_MAX_NODES);
    size_t outputs = 0;
    for (size_t i = 0; i < g->n_node; i++)
        outputs += g->node[i]->n_output;
    im->cap = 2 * (g->n_initializer + im->nextra + g->n_input + outputs) + 16;
    im->v = clg__calloc(im->cap, sizeof *im->v);
    im->tcap = 4096;
    im->text = clg__malloc(im->tcap);
    if (!im->v || !im->text)
        return clg__oom(im->ctx, "ONNX import");
    im->text[0] = '\0';
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name)
            define(im, g->initializer[i]->name)->tensor = g->initializer[i];
    for (size_t i = 0; i < im->nextra; i++)
        define(im, im->extra[i].name)->tensor = im->extra[i].tensor;
    clg_status st = network_input(im);
    for (size_t i = 0; st == CLG_OK && i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        snprintf(im->where, sizeof im->where, "node %zu (%s%s%s%s)", i,
                 node->op_type ? node->op_type : "?", node->name && node->name[0] ? " \"" : "",
                 node->name ? node->name : "", node->name && node->name[0] ? "\"" : "");
        im->fuse_relu = fuses_relu(im, i);
        st = node_to_layer(im, node, i);
        i += (size_t)im->fuse_relu; /* the Relu is the add's relu=1 */
        im->fuse_relu = 0;
    }
    im->where[0] = '\0';
    value *result = g->n_output == 1 ? find(im, g->output[0]->name) : NULL;
    if (st == CLG_OK && (!result || !result->is_layer || strcmp(result->layer, im->last)))
        st = fail(im, CLG_ERR_UNSUPPORTED, "%zu graph outputs, or one other than the last "
                  "layer (clgrad's networks have one output, at the end)", g->n_output);
    if (st == CLG_OK && !strcmp(im->last, "input"))
        st = fail(im, CLG_ERR_UNSUPPORTED, "a graph without operators");
    if (st == CLG_OK && !im->ended) /* clgrad's output layer */
        st = put(im, "softmax from=%s\n", im->last);
    return st;
}

static void importer_free(importer *im)
{
    for (size_t i = 0; i < im->np; i++)
        free(im->p[i].data);
    free(im->p), free(im->v), free(im->text);
}

clg_status clg__onnx_import_model(clg_ctx *ctx, const Onnx__ModelProto *m,
                                  const clg__onnx_const *extra, size_t nextra, clg_net **out)
{
    *out = NULL;
    importer im;
    memset(&im, 0, sizeof im);
    im.ctx = ctx, im.extra = extra, im.nextra = nextra;
    clg_status st = translate(&im, m);
    clg_net *net = NULL;
    if (st == CLG_OK)
        st = clg_net_parse(ctx, im.text, &net);
    if (st == CLG_OK)
        st = clg_net_init(net, 1);
    if (st == CLG_OK)
        st = fill(&im, net);
    if (st == CLG_OK)
        st = classes(&im, m, net);
    importer_free(&im);
    if (st != CLG_OK) {
        clg_net_destroy(net);
        return st;
    }
    *out = net;
    return CLG_OK;
}

clg_status clg__onnx_translate(const Onnx__ModelProto *m, char **text)
{
    importer im;
    memset(&im, 0, sizeof im);
    clg_status st = translate(&im, m);
    *text = st == CLG_OK ? im.text : NULL;
    if (st == CLG_OK)
        im.text = NULL;
    importer_free(&im);
    return st;
}

clg_status clg_net_import_onnx(clg_ctx *ctx, const char *path, clg_net **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !path || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_net_import_onnx: ctx, path and out must "
                         "not be NULL");
    Onnx__ModelProto *m;
    clg_status st = clg__onnx_read(ctx, path, &m);
    if (st == CLG_OK)
        st = clg__onnx_import_model(ctx, m, NULL, 0, out);
    if (m)
        onnx__model_proto__free_unpacked(m, NULL);
    return st;
}
