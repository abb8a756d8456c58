/* The ONNX importer's parts: the table of names (onnx_import.c) and the translation of each
 * operator into a line of network text (onnx_ops.c: the classic layers; onnx_ops_modern.c:
 * constants, clipped and gated activations, means). */
#ifndef CLGRAD_ONNX_IMPORT_INTERNAL_H
#define CLGRAD_ONNX_IMPORT_INTERNAL_H

#include "nn/nn_internal.h"
#include "nn/onnx_internal.h"

/* What an ONNX tensor name stands for here. */
typedef struct value {
    const char *name;            /* borrowed from the model */
    int is_layer;                /* a layer's output (or the input), else a constant */
    char layer[CLG_LAYER_NAME];  /* the layer's name ("input" for the network's input) */
    const Onnx__TensorProto *tensor; /* a constant's */
    int flat;                    /* the layer's output seen flattened (Flatten, Reshape) */
    int bias_open;               /* a MatMul's fc, whose bias a following Add of a constant
                                    may bring */
    int norm_stage;              /* the network's input after its normalisation's Sub (1) or
                                    Div (2) */
    int groups;                  /* a layer's output seen as N x groups x C/groups x H x W (the
                                    first Reshape of a channel shuffle), or 0 */
    int swapped;                 /* ... with its two channel axes transposed */
    int pad[4];                  /* zero padding (top, bottom, left, right) that the one Conv
                                  reading it adds to its own: a Pad folded away */
} value;

/* A tensor for a layer's parameter or state, uploaded once the network is built. */
typedef struct param_rec {
    char layer[CLG_LAYER_NAME];
    int slot;                    /* 0, 1: param[slot]; 2, 3: state[slot - 2] */
    float *data;                 /* owned */
    size_t n;
} param_rec;

/* The importer's state: every ONNX name defined so far, the layer names taken, how often
 * each name is read, the parameter records and the network text being written. */
typedef struct importer {
    clg_ctx *ctx;
    const Onnx__GraphProto *g;
    long opset;                  /* the model's (default domain) */
    const clg__onnx_const *extra; /* caller's constants (conformance tests' inputs) */
    size_t nextra;
    value *v;                    /* open addressing on the name's hash */
    size_t cap;
    char (*taken)[CLG_LAYER_NAME]; /* layer names given (open addressing, cap slots) */
    struct uses {
        const char *name;
        size_t count;
    } *uses;                     /* how many inputs (and graph outputs) read each name */
    param_rec *p;
    size_t np, pcap;
    char *text;
    size_t len, tcap;
    const char *last;            /* the last layer written */
    size_t layers;               /* layers written */
    int fuse_relu;               /* the Add being written takes the Relu after it */
    int fuse_gate;               /* the Sigmoid being written is x's gate in the Mul after it */
    void **made;                 /* tensors made for Constant nodes (owned) */
    size_t nmade, madecap;
    size_t in_c;                 /* the network input's channels */
    int64_t batch;               /* its declared batch size, or -1 (symbolic) */
    float *norm;                 /* its normalisation: in_c means, then in_c std (owned), or
                                    NULL */
    int ended;                   /* a Softmax was written */
    char where[160];             /* "node 3 (Conv \"conv1\")" for errors */
} importer;

/* The name's entry, or NULL; the slot for a name, added (a later definition replaces an
 * earlier one). */
value *clg__oi_find(importer *im, const char *name);
/* How many node inputs and graph outputs read `name` (counted once, by count_use). */
size_t clg__oi_uses(const importer *im, const char *name);
void clg__oi_count_use(importer *im, const char *name, int delta);
value *clg__oi_define(importer *im, const char *name);

/* An error prefixed "ONNX import: node k (Op "name"): ". */
clg_status clg__oi_fail(importer *im, clg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends to the network text. */
clg_status clg__oi_put(importer *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Input k of the node: a layer's output; const_ok 1: or a constant; 2: a constant only. */
clg_status clg__oi_input(importer *im, const Onnx__NodeProto *node, size_t k, int const_ok,
                         value **out);
/* Records constant t (times scale) for layer's parameter (slot 0, 1) or state (2, 3); *at
 * (may be NULL) its index. */
clg_status clg__oi_record(importer *im, const char *layer, int slot, const Onnx__TensorProto *t,
                          float scale, size_t *at);

/* Attributes: an int list into out[0..cap) (*n its count), an int, a float, and a check that
 * the node has only the listed ones (comma-separated). */
clg_status clg__oi_ints(importer *im, const Onnx__NodeProto *node, const char *name, long *out,
                        size_t cap, size_t *n);
long clg__oi_int_attr(const Onnx__NodeProto *node, const char *name, long def);
/* An int list that later opsets give as input k (a constant) and earlier ones as attribute
 * `name`: at most cap values into out, *n their count (0 when neither is there). */
clg_status clg__oi_int_list(importer *im, const Onnx__NodeProto *node, size_t k,
                            const char *name, int64_t *out, size_t cap, size_t *n);
float clg__oi_float_attr(const Onnx__NodeProto *node, const char *name, float def);
/* A string attribute into out (cut to cap - 1 characters), def when absent. */
void clg__oi_string_attr(const Onnx__NodeProto *node, const char *name, const char *def,
                         char *out, size_t cap);
/* The one float of constant input k (Clip's bounds, Dropout's ratio, Pad's value). */
clg_status clg__oi_scalar_input(importer *im, const Onnx__NodeProto *node, size_t k, float *out);
clg_status clg__oi_known_attrs(importer *im, const Onnx__NodeProto *node, const char *known);

/* Writes "<line> name=NAME from=IN" for node k and makes its output (or, with fuse_relu or
 * fuse_gate, that of the node after it) that layer; name receives the layer's name. */
clg_status clg__oi_layer(importer *im, const Onnx__NodeProto *node, size_t k, const char *from,
                         char *name, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same for output `tensor` of node k (a Split's outputs, a pattern's last node). */
clg_status clg__oi_layer_as(importer *im, const char *tensor, size_t k, const char *from,
                            char *name, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Writes "<line> name=NAME from=IN" for a layer node k needs before its own (a part of a
 * Concat of more inputs than a layer takes), named NAME, a name no layer has. */
clg_status clg__oi_part(importer *im, size_t k, const char *from, char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A float or int64 tensor of the given dims (at most 4,096 elements) owned by the importer,
 * for values it computes; NULL when out of memory or too large. */
Onnx__TensorProto *clg__oi_make_tensor(importer *im, const char *name, int type,
                                       const int64_t *dims, size_t ndims);
/* Makes the node's output another name for in (Flatten, Identity, an Add folded as a bias). */
void clg__oi_alias(importer *im, const Onnx__NodeProto *node, const value *in, int flat);

/* Node k as the network text's line for it (onnx_ops.c). */
clg_status clg__oi_node(importer *im, const Onnx__NodeProto *node, size_t k);

/* onnx_ops_modern.c: a Constant node's value as a constant; Clip; HardSigmoid, HardSwish and
 * (fuse_gate) x times a Sigmoid or HardSigmoid of x; ReduceMean over H and W; Mul of two
 * layers. */
clg_status clg__oi_constant(importer *im, const Onnx__NodeProto *node);
clg_status clg__oi_clip(importer *im, const Onnx__NodeProto *node, size_t k);
clg_status clg__oi_gate(importer *im, const Onnx__NodeProto *node, size_t k);
clg_status clg__oi_reduce_mean(importer *im, const Onnx__NodeProto *node, size_t k);
clg_status clg__oi_mul(importer *im, const Onnx__NodeProto *node, size_t k);
/* onnx_ops_channels.c: Split and Slice along the channels as slice layers; a channel shuffle's steps
 * (Reshape to N x g x C/g x H x W, Transpose of the two channel axes, Reshape back: the last a
 * shuffle layer); *done 0 for a Reshape that is not one. */
clg_status clg__oi_split(importer *im, const Onnx__NodeProto *node, size_t k);
clg_status clg__oi_slice(importer *im, const Onnx__NodeProto *node, size_t k);
clg_status clg__oi_pad(importer *im, const Onnx__NodeProto *node, size_t k);
/* Resize and Upsample as clgrad's upsample layer. */
clg_status clg__oi_resize(importer *im, const Onnx__NodeProto *node, size_t k);
/* N x C x H x W of the layer x names (the network's input: its declared dims; N -1 when the
 * batch is not fixed), from the network written so far; 0 when it cannot be told. */
int clg__oi_layer_shape(importer *im, const value *x, int64_t out[4]);
clg_status clg__oi_shuffle_step(importer *im, const Onnx__NodeProto *node, size_t k, int *done);
/* onnx_fold.c: a node that computes a constant from constants (or Shape of a layer),
 * evaluated; *done 0 when the node is not one. */
clg_status clg__oi_fold(importer *im, const Onnx__NodeProto *node, int *done);
/* A Sub or Div of the network's input by a constant of 1 or C values (its normalisation, as
 * clgrad exports it); *done 0 when the node is not one (another operator's business). */
clg_status clg__oi_input_norm(importer *im, const Onnx__NodeProto *node, int *done);
/* Whether node k is a gate the next node multiplies its input by (SiLU, hard swish). */
int clg__oi_fuses_gate(const importer *im, size_t k);

#endif
