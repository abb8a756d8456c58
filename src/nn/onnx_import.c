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
#include "nn/onnx_import_internal.h"

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
        value *v = clg__oi_find((importer *)im, a->input[i]);
        if (!v || !v->is_layer)
            return 0;
    }
    return clg__oi_uses(im, a->output[0]) == 1;
}

/* The graph's one computed input: 4-D float N x C x H x W (or N x C x W as 1 row). */
static clg_status network_input(importer *im)
{
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < im->g->n_input; i++) {
        const char *name = im->g->input[i]->name;
        value *v = clg__oi_find(im, name);
        if (v && !v->is_layer)
            continue; /* an initializer listed as an input (older exporters) */
        if (in)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "inputs \"%s\" and \"%s\": clgrad's networks "
                        "take one", in->name, name);
        in = im->g->input[i];
    }
    if (!in || !in->name)
        return clg__oi_fail(im, CLG_ERR_CORRUPT, "the graph has no input");
    const Onnx__TypeProto *t = in->type;
    /* tensor_type shares a union with the other kinds of type: read it only when it is the one set */
    const Onnx__TypeProto__Tensor *tt =
        t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? t->tensor_type : NULL;
    const Onnx__TensorShapeProto *s = tt ? tt->shape : NULL;
    if (!tt || (tt->has_elem_type && tt->elem_type != CLG__ONNX_FLOAT) || !s || s->n_dim != 4)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "input \"%s\" is not a 4-D float tensor (N x C x H "
                    "x W)", in->name);
    long d[3];
    for (int i = 0; i < 3; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = s->dim[i + 1];
        if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
            dim->dim_value < 1 || dim->dim_value > 1 << 20)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "input \"%s\": dimension %d must be a fixed "
                        "size", in->name, i + 1);
        d[i] = (long)dim->dim_value;
    }
    im->in_c = (size_t)d[0];
    const Onnx__TensorShapeProto__Dimension *n0 = s->dim[0];
    im->batch = n0->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                n0->dim_value > 0 ? n0->dim_value : -1;
    value *v = clg__oi_define(im, in->name);
    v->is_layer = 1;
    snprintf(v->layer, sizeof v->layer, "input");
    im->last = v->layer;
    return clg__oi_put(im, "input %ldx%ldx%ld\n", d[1], d[2], d[0]);
}

static int opset_ok(const Onnx__ModelProto *m, long *version)
{
    *version = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *domain = m->opset_import[i]->domain;
        if ((!domain || !domain[0] || !strcmp(domain, "ai.onnx")) &&
            m->opset_import[i]->has_version)
            *version = (long)m->opset_import[i]->version;
    }
    return *version >= 6 && *version <= 21;
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

/* The input line given the normalisation read from the graph's Sub and Div. */
static clg_status with_normalisation(importer *im)
{
    size_t norm = clg__norm_text(im->norm, im->in_c, NULL, 0), at = strcspn(im->text, "\n");
    size_t cap = im->len + norm + 1;
    char *text = clg__malloc(cap);
    if (!text)
        return clg__oom(im->ctx, "ONNX import");
    memcpy(text, im->text, at);
    clg__norm_text(im->norm, im->in_c, text + at, norm + 1);
    size_t n = at + norm + (size_t)snprintf(text + at + norm, cap - at - norm, "%s", im->text + at);
    free(im->text);
    im->text = text, im->len = n, im->tcap = cap;
    return CLG_OK;
}

/* The model as network text and parameter records in im (set up with ctx, extras). */
static clg_status translate(importer *im, const Onnx__ModelProto *m)
{
    const Onnx__GraphProto *g = m->graph;
    im->g = g;
    long version;
    if (!opset_ok(m, &version))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "opset %ld (clgrad reads 6 to 21)", version);
    im->opset = version;
    if (g->n_node > CLG__ONNX_MAX_NODES || g->n_initializer > CLG__ONNX_MAX_NODES ||
        g->n_input > CLG__ONNX_MAX_NODES)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "%zu nodes, %zu initializers (at most %d each)",
                    g->n_node, g->n_initializer, CLG__ONNX_MAX_NODES);
    size_t outputs = 0;
    for (size_t i = 0; i < g->n_node; i++)
        outputs += g->node[i]->n_output;
    im->cap = 2 * (g->n_initializer + im->nextra + g->n_input + outputs) + 16;
    size_t inputs = 0;
    for (size_t i = 0; i < g->n_node; i++)
        inputs += g->node[i]->n_input;
    im->cap += 2 * (inputs + g->n_output); /* the uses table holds every name read */
    im->v = clg__calloc(im->cap, sizeof *im->v);
    im->taken = clg__calloc(im->cap, sizeof *im->taken);
    im->uses = clg__calloc(im->cap, sizeof *im->uses);
    im->tcap = 4096;
    im->text = clg__malloc(im->tcap);
    if (!im->v || !im->taken || !im->uses || !im->text)
        return clg__oom(im->ctx, "ONNX import");
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i]->n_input; j++)
            if (g->node[i]->input[j])
                clg__oi_count_use(im, g->node[i]->input[j], 1);
    for (size_t i = 0; i < g->n_output; i++)
        if (g->output[i]->name)
            clg__oi_count_use(im, g->output[i]->name, 1);
    /* a node whose outputs nothing reads (a crop's reference, once exported, reads only its
     * size) is left out, and its reads with it; in reverse, so that chains of them go too */
    unsigned char *dead = clg__calloc(g->n_node ? g->n_node : 1, 1);
    if (!dead)
        return clg__oom(im->ctx, "ONNX import");
    for (size_t i = g->n_node; i-- > 0;) {
        const Onnx__NodeProto *node = g->node[i];
        int read = 0;
        for (size_t j = 0; j < node->n_output && !read; j++)
            read = node->output[j] && node->output[j][0] && clg__oi_uses(im, node->output[j]);
        if (read || !node->n_output)
            continue;
        dead[i] = 1;
        for (size_t j = 0; j < node->n_input; j++)
            if (node->input[j])
                clg__oi_count_use(im, node->input[j], -1);
    }
    im->text[0] = '\0';
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name)
            clg__oi_define(im, g->initializer[i]->name)->tensor = g->initializer[i];
    for (size_t i = 0; i < im->nextra; i++)
        clg__oi_define(im, im->extra[i].name)->tensor = im->extra[i].tensor;
    clg_status st = network_input(im);
    for (size_t i = 0; st == CLG_OK && i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        if (dead[i])
            continue;
        snprintf(im->where, sizeof im->where, "node %zu (%s%s%s%s)", i,
                 node->op_type ? node->op_type : "?", node->name && node->name[0] ? " \"" : "",
                 node->name ? node->name : "", node->name && node->name[0] ? "\"" : "");
        im->fuse_relu = fuses_relu(im, i);
        im->fuse_gate = clg__oi_fuses_gate(im, i);
        st = clg__oi_node(im, node, i);
        /* the Relu is the add's relu=1; the Mul by a gate the silu or hard swish */
        i += (size_t)(im->fuse_relu + im->fuse_gate);
        im->fuse_relu = im->fuse_gate = 0;
    }
    free(dead);
    im->where[0] = '\0';
    value *result = g->n_output == 1 ? clg__oi_find(im, g->output[0]->name) : NULL;
    if (st == CLG_OK && (!result || !result->is_layer || strcmp(result->layer, im->last)))
        st = clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "%zu graph outputs, or one other than the last "
                  "layer (clgrad's networks have one output, at the end)", g->n_output);
    if (st == CLG_OK && !strcmp(im->last, "input"))
        st = clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a graph without operators");
    if (st == CLG_OK && !im->ended) /* clgrad's output layer */
        st = clg__oi_put(im, "softmax from=%s\n", im->last);
    return st == CLG_OK && im->norm ? with_normalisation(im) : st;
}

static void importer_free(importer *im)
{
    for (size_t i = 0; i < im->np; i++)
        free(im->p[i].data);
    for (size_t i = 0; i < im->nmade; i++)
        free(im->made[i]);
    free(im->made);
    free(im->norm);
    free(im->p), free(im->v), free(im->taken), free(im->uses), free(im->text);
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
        st = clg__onnx_load_external(ctx, path, m);
    if (st == CLG_OK)
        st = clg__onnx_import_model(ctx, m, NULL, 0, out);
    if (m)
        onnx__model_proto__free_unpacked(m, NULL);
    return st;
}
