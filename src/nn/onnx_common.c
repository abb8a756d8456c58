/* Reading ONNX files and their tensors with every size checked against what the file holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"
#include "nn/onnx_internal.h"

clg_status clg__onnx_read(clg_ctx *ctx, const char *path, Onnx__ModelProto **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return clg__fail(ctx, CLG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len < 0 || (size_t)len > CLG__ONNX_MAX_FILE || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return clg__fail(ctx, len < 0 ? CLG_ERR_IO : CLG_ERR_CORRUPT, "%s: %s", path,
                         len < 0 ? "cannot read its size" : "larger than 1 GiB");
    }
    unsigned char *buf = clg__malloc(len ? (size_t)len : 1);
    size_t got = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!buf)
        return clg__oom(ctx, "reading an ONNX model");
    if (got != (size_t)len) {
        free(buf);
        return clg__fail(ctx, CLG_ERR_IO, "cannot read %s", path);
    }
    /* protobuf-c checks the wire format: lengths against the buffer, nesting */
    *out = onnx__model_proto__unpack(NULL, got, buf);
    free(buf);
    if (!*out || !(*out)->graph)
        return clg__fail(ctx, CLG_ERR_CORRUPT, "%s is not an ONNX model (%s)", path,
                         *out ? "no graph" : "not a valid protobuf ModelProto");
    return CLG_OK;
}

clg_status clg__onnx_numel(clg_ctx *ctx, const Onnx__TensorProto *t, size_t *n)
{
    size_t total = 1;
    if (t->n_dims > CLG__ONNX_MAX_DIMS)
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\" has %zu dimensions", t->name,
                         t->n_dims);
    for (size_t i = 0; i < t->n_dims; i++) {
        int64_t d = t->dims[i];
        if (d < 0 || (d > 0 && total > ((size_t)1 << 40) / (size_t)d))
            return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\": dimension %zu is %lld",
                             t->name, i, (long long)d);
        total *= (size_t)d;
    }
    *n = total;
    return CLG_OK;
}

/* Where a tensor's values are: refuses external data and checks the stored count. */
static clg_status locate(clg_ctx *ctx, const Onnx__TensorProto *t, int type, size_t elem,
                         size_t stored, size_t *n)
{
    if (t->n_external_data || (t->has_data_location &&
                               t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\" keeps its data in an external "
                         "file, which clgrad does not read", t->name);
    if (!t->has_data_type || t->data_type != type)
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "tensor \"%s\" has element type %d, "
                         "clgrad reads %s here", t->name, t->has_data_type ? t->data_type : 0,
                         type == CLG__ONNX_FLOAT ? "float (1)" : "int64 (7)");
    clg_status st = clg__onnx_numel(ctx, t, n);
    if (st != CLG_OK)
        return st;
    size_t have = t->has_raw_data ? t->raw_data.len / elem : stored;
    if ((t->has_raw_data && t->raw_data.len % elem) || have != *n)
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\" holds %zu bytes of data for a "
                         "shape of %zu elements", t->name,
                         t->has_raw_data ? t->raw_data.len : stored * elem, *n);
    return CLG_OK;
}

clg_status clg__onnx_floats(clg_ctx *ctx, const Onnx__TensorProto *t, float **out, size_t *n)
{
    *out = NULL;
    clg_status st = locate(ctx, t, CLG__ONNX_FLOAT, sizeof(float), t->n_float_data, n);
    if (st != CLG_OK)
        return st;
    *out = clg__malloc(*n ? *n * sizeof(float) : 1);
    if (!*out)
        return clg__oom(ctx, "an ONNX tensor");
    /* raw_data is little-endian, as every host clgrad runs on; an empty tensor may have no
     * data pointer at all, which memcpy must not be given even for 0 bytes */
    if (*n)
        memcpy(*out, t->has_raw_data ? (const void *)t->raw_data.data : (const void *)t->float_data,
               *n * sizeof(float));
    return CLG_OK;
}

clg_status clg__onnx_int64s(clg_ctx *ctx, const Onnx__TensorProto *t, int64_t *out,
                            size_t cap, size_t *n)
{
    clg_status st = locate(ctx, t, CLG__ONNX_INT64, sizeof(int64_t), t->n_int64_data, n);
    if (st == CLG_OK && *n > cap)
        st = clg__fail(ctx, CLG_ERR_UNSUPPORTED, "tensor \"%s\" has %zu values, at most %zu "
                       "expected", t->name, *n, cap);
    if (st == CLG_OK && *n)
        memcpy(out, t->has_raw_data ? (const void *)t->raw_data.data : (const void *)t->int64_data,
               *n * sizeof(int64_t));
    return st;
}

const Onnx__AttributeProto *clg__onnx_attr(const Onnx__NodeProto *node, const char *name)
{
    for (size_t i = 0; i < node->n_attribute; i++)
        if (node->attribute[i]->name && !strcmp(node->attribute[i]->name, name))
            return node->attribute[i];
    return NULL;
}
