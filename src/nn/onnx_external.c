/* ONNX external data: initializers whose bytes live in another file beside the model (what
 * torch.onnx.export writes by default since PyTorch 2.9: model.onnx and model.onnx.data),
 * read into the tensor as raw data once the model is parsed. Locations are relative to the
 * model's folder and may not leave it; every offset and length is checked against the file
 * before anything is allocated for it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"
#include "nn/onnx_internal.h"

/* A decimal size from an external_data entry; 0 on junk. */
static int size_value(const char *s, unsigned long long *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return 0;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return !*end && errno == 0;
}

static clg_status load_one(clg_ctx *ctx, const char *dir, Onnx__TensorProto *t)
{
    const char *loc = NULL, *off = NULL, *len = NULL, *name = t->name ? t->name : "?";
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (e->key && !strcmp(e->key, "location"))
            loc = e->value;
        else if (e->key && !strcmp(e->key, "offset"))
            off = e->value;
        else if (e->key && !strcmp(e->key, "length"))
            len = e->value;
    }
    unsigned long long offset = 0, length = 0;
    if (!loc || !*loc)
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\" keeps its data in an external "
                         "file and names none", name);
    if (loc[0] == '/' || !strncmp(loc, "../", 3) || strstr(loc, "/../") || !strcmp(loc, ".."))
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\" keeps its data in an external "
                         "file outside the model's folder (\"%s\"), which clgrad does not read",
                         name, loc);
    if ((off && !size_value(off, &offset)) || (len && !size_value(len, &length)))
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\": external data offset \"%s\", "
                         "length \"%s\"", name, off ? off : "", len ? len : "");
    size_t n, elem = t->data_type == CLG__ONNX_FLOAT ? 4 : t->data_type == CLG__ONNX_INT64 ? 8 : 0;
    clg_status st = clg__onnx_numel(ctx, t, &n);
    if (st != CLG_OK)
        return st;
    if (!elem)
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "tensor \"%s\" has element type %d, clgrad "
                         "reads float (1) and int64 (7)", name, t->data_type);
    if (len && length != (unsigned long long)n * elem)
        return clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\": %llu bytes of external data for "
                         "a shape of %zu elements", name, length, n);
    size_t need = n * elem, pathlen = strlen(dir) + strlen(loc) + 2;
    char *path = clg__malloc(pathlen);
    if (!path)
        return clg__oom(ctx, "ONNX external data");
    snprintf(path, pathlen, "%s/%s", dir, loc);
    FILE *f = fopen(path, "rb");
    long size = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (!f || size < 0) {
        st = clg__fail(ctx, CLG_ERR_IO, "tensor \"%s\": cannot read its external data %s: %s",
                       name, path, strerror(errno));
    } else if (offset > (unsigned long long)size || need > (unsigned long long)size - offset) {
        st = clg__fail(ctx, CLG_ERR_CORRUPT, "tensor \"%s\": %zu bytes at offset %llu of %s, "
                       "which holds %ld", name, need, offset, path, size);
    } else {
        uint8_t *data = clg__malloc(need ? need : 1);
        if (!data)
            st = clg__oom(ctx, "ONNX external data");
        else if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(data, 1, need, f) != need)
            st = clg__fail(ctx, CLG_ERR_IO, "tensor \"%s\": cannot read %s", name, path);
        if (st == CLG_OK) { /* raw data from now on, freed with the model */
            t->has_raw_data = 1, t->raw_data.data = data, t->raw_data.len = need;
            t->has_data_location = 0, t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
            for (size_t i = 0; i < t->n_external_data; i++)
                onnx__string_string_entry_proto__free_unpacked(t->external_data[i], NULL);
            free(t->external_data);
            t->external_data = NULL, t->n_external_data = 0;
        } else {
            free(data);
        }
    }
    if (f)
        fclose(f);
    free(path);
    return st;
}

clg_status clg__onnx_load_external(clg_ctx *ctx, const char *model_path, Onnx__ModelProto *m)
{
    const char *slash = strrchr(model_path, '/');
    size_t dlen = slash ? (size_t)(slash - model_path) : 1;
    char *dir = clg__malloc(dlen + 1);
    if (!dir)
        return clg__oom(ctx, "ONNX external data");
    if (slash)
        memcpy(dir, model_path, dlen), dir[dlen] = '\0';
    else
        strcpy(dir, ".");
    if (slash && dlen == 0)
        strcpy(dir, "/");
    clg_status st = CLG_OK;
    Onnx__GraphProto *g = m->graph;
    for (size_t i = 0; st == CLG_OK && i < g->n_initializer; i++) {
        Onnx__TensorProto *t = g->initializer[i];
        if (t->n_external_data ||
            (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
            st = load_one(ctx, dir, t);
    }
    free(dir);
    return st;
}
