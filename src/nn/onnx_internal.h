/* What the ONNX importer and exporter share: the generated protobuf-c types, tensors' float
 * data with their checks, attributes. */
#ifndef CLGRAD_ONNX_INTERNAL_H
#define CLGRAD_ONNX_INTERNAL_H

#include "clgrad/onnx.h"
#include "onnx.pb-c.h"

/* Limits on what a model file may ask for, checked before anything is allocated from it. */
#define CLG__ONNX_MAX_FILE ((size_t)1 << 30)   /* bytes */
#define CLG__ONNX_MAX_NODES 10000  /* CNNs have hundreds; layer lookups by name are linear */
#define CLG__ONNX_MAX_DIMS 8

/* ONNX's float and int64 element types (TensorProto.DataType). */
enum { CLG__ONNX_FLOAT = 1, CLG__ONNX_INT64 = 7 };

/* The model in path, parsed (free with onnx__model_proto__free_unpacked(m, NULL)). */
clg_status clg__onnx_read(clg_ctx *ctx, const char *path, Onnx__ModelProto **out);
/* The initializers m keeps in external files, read from the folder of model_path into their
 * raw data (onnx_external.c). */
clg_status clg__onnx_load_external(clg_ctx *ctx, const char *model_path, Onnx__ModelProto *m);

/* A tensor's elements (product of dims, overflow and negative dims refused). */
clg_status clg__onnx_numel(clg_ctx *ctx, const Onnx__TensorProto *t, size_t *n);

/* A float tensor's values: copied into *out (malloc'ed, n floats) from raw_data (little-
 * endian, length checked against the shape) or float_data; external data refused. */
clg_status clg__onnx_floats(clg_ctx *ctx, const Onnx__TensorProto *t, float **out, size_t *n);

/* An int64 tensor's values (Reshape's shape), as for floats; at most cap of them. */
clg_status clg__onnx_int64s(clg_ctx *ctx, const Onnx__TensorProto *t, int64_t *out,
                            size_t cap, size_t *n);

/* The node's attribute called name, or NULL. */
const Onnx__AttributeProto *clg__onnx_attr(const Onnx__NodeProto *node, const char *name);

/* A named constant the model's graph reads as an input (ONNX's node tests feed weights as
 * inputs): treated as an initializer. */
typedef struct clg__onnx_const {
    const char *name;
    const Onnx__TensorProto *tensor;
} clg__onnx_const;

/* clg_net_import_onnx on a parsed model, with extra constants. */
clg_status clg__onnx_import_model(clg_ctx *ctx, const Onnx__ModelProto *m,
                                  const clg__onnx_const *extra, size_t nextra, clg_net **out);

/* Without a device (the fuzzer): the network text the model translates to (malloc'ed), with
 * every check of the import but the parameters' sizes against the layers. */
clg_status clg__onnx_translate(const Onnx__ModelProto *m, char **text);

#endif
