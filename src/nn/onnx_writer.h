/* What writes an ONNX model (onnx_export.c) and what each layer kind's entry uses to add its
 * own nodes (the table's onnx_export): nodes, attributes, initializers from device tensors,
 * and the names of a layer's inputs. Everything allocated lives until the model is written;
 * a failed allocation or read marks the model failed and later calls do nothing. */
#ifndef CLGRAD_NN_ONNX_WRITER_H
#define CLGRAD_NN_ONNX_WRITER_H

#include "nn/nn_internal.h"
#include "onnx.pb-c.h"

typedef struct clg__onnx_out {
    const clg_net *net;
    void **owned;
    size_t nowned, cap;
    int failed;
    Onnx__NodeProto **nodes;
    size_t nnodes, nodes_cap;
    Onnx__TensorProto **inits;
    size_t ninits, inits_cap;
    int *rank2;               /* per layer: its ONNX output is 2-D (N x M) */
    const char *input;        /* what layers reading the network's input read: "input", or
                                 the normalisation's output */
} clg__onnx_out;

/* p kept until the model is written (NULL: the model fails); returns p. */
void *clg__onnx_own(clg__onnx_out *ex, void *p);
/* base followed by suffix ("conv1" ".weight"), kept. */
char *clg__onnx_name(clg__onnx_out *ex, const char *base, const char *suffix);
/* A node op(inputs) -> output; attributes added after (NULL after a failure). */
Onnx__NodeProto *clg__onnx_node(clg__onnx_out *ex, const char *op, const char *out,
                                const char *in0, const char *in1, const char *in2);
void clg__onnx_attr_int(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name, int64_t v);
void clg__onnx_attr_float(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name, float v);
/* v must outlive the export (a literal) */
void clg__onnx_attr_string(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name,
                           const char *v);
void clg__onnx_attr_ints(clg__onnx_out *ex, Onnx__NodeProto *n, const char *name,
                         const int64_t *v, size_t count);
/* An initializer `name` of the given dims from a device tensor (or host floats). */
/* An int64 initializer (shapes, Slice's bounds) of the given dims. */
void clg__onnx_initializer_i64(clg__onnx_out *ex, const char *name, const int64_t *v,
                               const int64_t *dims, size_t ndims);
/* One more input of node n (after the three clg__onnx_node takes). */
void clg__onnx_more_input(clg__onnx_out *ex, Onnx__NodeProto *n, const char *in);
void clg__onnx_initializer(clg__onnx_out *ex, const char *name, const clg_tensor *t,
                           const float *host, const int64_t *dims, size_t ndims);
/* Layer i, and the ONNX name of its k-th input ("input": the network's). */
const clg__layer *clg__onnx_layer(const clg__onnx_out *ex, size_t i);
const char *clg__onnx_input(const clg__onnx_out *ex, size_t i, size_t k);
/* Layer i's input as a 2-D tensor (N x rest): its name, or a Flatten of it. */
const char *clg__onnx_flat_input(clg__onnx_out *ex, size_t i);
/* Node n reads every input of layer i (an add of three or more, a concat). */
void clg__onnx_all_inputs(clg__onnx_out *ex, Onnx__NodeProto *n, size_t i);
/* Layer i's ONNX output has its input's rank (keep), or is 2-D (set). */
void clg__onnx_keep_rank(clg__onnx_out *ex, size_t i);
void clg__onnx_set_rank2(clg__onnx_out *ex, size_t i);

#endif
