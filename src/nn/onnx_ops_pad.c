/* ONNX import of Pad over H and W (attributes to opset 10; pads, the constant and, from 18,
 * the axes as inputs): a zero Pad read only by a Conv with explicit padding becomes part of
 * that Conv's padding (no layer, no copy); any other becomes clgrad's pad layer. */
#include <stdio.h>
#include <string.h>

#include "nn/onnx_import_internal.h"

/* The node after k that reads name, or NULL. */
static const Onnx__NodeProto *reader(const importer *im, size_t k, const char *name)
{
    for (size_t j = k + 1; j < im->g->n_node; j++)
        for (size_t i = 0; i < im->g->node[j]->n_input; i++)
            if (!strcmp(im->g->node[j]->input[i], name))
                return im->g->node[j];
    return NULL;
}

/* Whether a zero pad's output, read once, goes to a Conv as its data with explicit pads. */
static int conv_takes_it(const importer *im, size_t k, const char *name)
{
    const Onnx__NodeProto *r = clg__oi_uses(im, name) == 1 ? reader(im, k, name) : NULL;
    if (!r || strcmp(r->op_type, "Conv") || !r->n_input || strcmp(r->input[0], name))
        return 0;
    const Onnx__AttributeProto *a = clg__onnx_attr(r, "auto_pad");
    return !a || !a->has_s || (a->s.len == 6 && !memcmp(a->s.data, "NOTSET", 6)) ||
           (a->s.len == 5 && !memcmp(a->s.data, "VALID", 5));
}

/* ONNX's pads (begins, then ends, of each axis listed, or of all four) as T,B,L,R; the N and
 * C axes must not be padded. */
static clg_status spatial_pads(importer *im, const int64_t *p, size_t n, const int64_t *axes,
                               size_t naxes, int tblr[4])
{
    int64_t all[8] = {0};
    size_t rank = naxes ? naxes : n / 2;
    if (n != 2 * rank || (!naxes && rank != 4))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "%zu pads (clgrad pads N x C x H x W "
                            "tensors: 8, or 2 per axis given)", n);
    for (size_t i = 0; i < rank; i++) {
        int64_t axis = naxes ? axes[i] : (int64_t)i;
        axis = axis < 0 ? axis + 4 : axis;
        if (axis < 0 || axis > 3)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "axis %lld of a 4-D tensor",
                                (long long)axes[i]);
        all[axis] = p[i], all[4 + axis] = p[rank + i];
    }
    if (all[0] || all[1] || all[4] || all[5])
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "padding along N or C (clgrad pads H and "
                            "W)");
    for (int i = 0; i < 8; i++)
        if (all[i] < -(1 << 24) || all[i] > (1 << 24))
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a pad of %lld", (long long)all[i]);
    tblr[0] = (int)all[2], tblr[1] = (int)all[6], tblr[2] = (int)all[3], tblr[3] = (int)all[7];
    return CLG_OK;
}

clg_status clg__oi_pad(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x;
    clg_status st = clg__oi_known_attrs(im, node, "mode,pads,value");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    int64_t p[8], axes[4];
    size_t n = 0, naxes = 0;
    if (st == CLG_OK) /* an input from opset 11 */
        st = clg__oi_int_list(im, node, 1, "pads", p, 8, &n);
    if (st == CLG_OK && node->n_input > 3 && node->input[3][0]) /* opset 18 */
        st = clg__oi_int_list(im, node, 3, "axes", axes, 4, &naxes);
    float fill = clg__oi_float_attr(node, "value", 0.0f);
    if (st == CLG_OK && node->n_input > 2 && node->input[2][0])
        st = clg__oi_scalar_input(im, node, 2, &fill);
    int tblr[4];
    if (st == CLG_OK && x->flat)
        st = clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "padding a flattened tensor");
    if (st == CLG_OK)
        st = spatial_pads(im, p, n, axes, naxes, tblr);
    if (st != CLG_OK)
        return st;
    const Onnx__AttributeProto *a = clg__onnx_attr(node, "mode");
    char mode[16] = "constant";
    if (a && a->has_s)
        snprintf(mode, sizeof mode, "%.*s", (int)(a->s.len < 15 ? a->s.len : 15),
                 (const char *)a->s.data);
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "mode \"%s\" (clgrad pads constant, reflect "
                            "or edge)", mode);
    int constant = !strcmp(mode, "constant");
    if (constant && fill == 0.0f && tblr[0] >= 0 && tblr[1] >= 0 && tblr[2] >= 0 && tblr[3] >= 0 &&
        !x->pad[0] && !x->pad[1] && !x->pad[2] && !x->pad[3] &&
        conv_takes_it(im, k, node->output[0])) {
        clg__oi_alias(im, node, x, 0);
        memcpy(clg__oi_find(im, node->output[0])->pad, tblr, sizeof tblr);
        return CLG_OK;
    }
    char name[CLG_LAYER_NAME], value_opt[48] = "";
    if (constant && fill != 0.0f)
        snprintf(value_opt, sizeof value_opt, " value=%.9g", (double)fill);
    return clg__oi_layer(im, node, k, x->layer, name, "pad %d,%d,%d,%d mode=%s%s", tblr[0],
                         tblr[1], tblr[2], tblr[3], mode, value_opt);
}
