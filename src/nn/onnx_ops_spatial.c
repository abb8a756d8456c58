/* ONNX import of the spatial operators without weights. Pad over H and W (attributes to opset
 * 10; pads, the constant and, from 18, the axes as inputs): a zero Pad read only by a Conv
 * with explicit padding becomes part of that Conv's padding (no layer, no copy); any other
 * becomes clgrad's pad layer. Resize (and opset 7-9's Upsample) by whole factors over H and W,
 * nearest or bilinear in the coordinate modes that mean clgrad's upsample layer. */
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
    char pad[16];
    clg__oi_string_attr(r, "auto_pad", "NOTSET", pad, sizeof pad);
    return !strcmp(pad, "NOTSET") || !strcmp(pad, "VALID");
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
    char mode[16];
    clg__oi_string_attr(node, "mode", "constant", mode, sizeof mode);
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

/* The whole factors of 4 scales (1, 1, rows, columns), or of 4 sizes against x's shape. */
static clg_status factors(importer *im, const value *x, const float *scales, size_t ns,
                          const int64_t *sizes, size_t nz, long f[2])
{
    int64_t d[4];
    if (ns == 4) {
        for (int i = 0; i < 2; i++)
            f[i] = (long)scales[2 + i];
        if (scales[0] != 1.0f || scales[1] != 1.0f || (float)f[0] != scales[2] ||
            (float)f[1] != scales[3] || f[0] < 1 || f[1] < 1 || f[0] > 4096 || f[1] > 4096)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "scales %g, %g, %g, %g (clgrad "
                                "up-samples H and W by whole factors)", (double)scales[0],
                                (double)scales[1], (double)scales[2], (double)scales[3]);
        return CLG_OK;
    }
    if (nz == 4 && clg__oi_layer_shape(im, x, d) && d[2] > 0 && d[3] > 0 && sizes[1] == d[1] &&
        sizes[2] % d[2] == 0 && sizes[3] % d[3] == 0 && sizes[2] >= d[2] && sizes[3] >= d[3]) {
        f[0] = (long)(sizes[2] / d[2]), f[1] = (long)(sizes[3] / d[3]);
        if (f[0] <= 4096 && f[1] <= 4096)
            return CLG_OK;
    }
    return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a resize other than to whole multiples of H "
                        "and W (4 scales or 4 sizes)");
}

clg_status clg__oi_resize(importer *im, const Onnx__NodeProto *node, size_t k)
{
    long opset = im->opset;
    int legacy = !strcmp(node->op_type, "Upsample");
    value *x;
    clg_status st = clg__oi_known_attrs(im, node, "mode,coordinate_transformation_mode,"
                                                  "nearest_mode,cubic_coeff_a,exclude_outside,"
                                                  "extrapolation_value,antialias,scales,axes,"
                                                  "keep_aspect_ratio_policy");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    if (st == CLG_OK && x->flat)
        st = clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "resizing a flattened tensor");
    float scales[4] = {0};
    int64_t sizes[4];
    size_t ns = 0, nz = 0;
    /* scales: opset 7's attribute, opset 9-10's input 1, 11's input 2; sizes: 11's input 3 */
    size_t at = legacy || opset < 11 ? 1 : 2;
    const Onnx__AttributeProto *sa = clg__onnx_attr(node, "scales");
    if (st == CLG_OK && sa && sa->n_floats == 4)
        memcpy(scales, sa->floats, sizeof scales), ns = 4;
    if (st == CLG_OK && !ns && at < node->n_input && node->input[at][0]) {
        value *v;
        float *f = NULL;
        st = clg__oi_input(im, node, at, 2, &v);
        if (st == CLG_OK && clg__onnx_floats(im->ctx, v->tensor, &f, &ns) != CLG_OK)
            st = clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "%s", clg_ctx_last_error(im->ctx));
        if (st == CLG_OK && ns <= 4)
            memcpy(scales, f, ns * sizeof *f);
        free(f);
    }
    if (st == CLG_OK && !legacy && opset >= 11 && node->n_input > 3 && node->input[3][0])
        st = clg__oi_int_list(im, node, 3, "sizes", sizes, 4, &nz);
    /* opset 18: scales or sizes of the axes listed only (H and W here) */
    long axes[4];
    size_t na = 0;
    if (st == CLG_OK)
        st = clg__oi_ints(im, node, "axes", axes, 4, &na);
    if (st == CLG_OK && na) {
        int hw = na == 2 && (axes[0] == 2 || axes[0] == -2) && (axes[1] == 3 || axes[1] == -1);
        if (!hw || (ns && ns != 2) || (nz && nz != 2))
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "axes other than H and W (2, 3)");
        if (ns == 2)
            scales[2] = scales[0], scales[3] = scales[1], scales[0] = scales[1] = 1.0f, ns = 4;
        int64_t d[4];
        if (nz == 2 && clg__oi_layer_shape(im, x, d))
            sizes[2] = sizes[0], sizes[3] = sizes[1], sizes[0] = d[0], sizes[1] = d[1], nz = 4;
    }
    char policy[24];
    clg__oi_string_attr(node, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy);
    if (st == CLG_OK && nz && strcmp(policy, "stretch"))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "sizes with keep_aspect_ratio_policy %s",
                            policy);
    long f[2] = {1, 1};
    if (st == CLG_OK)
        st = factors(im, x, scales, ns, sizes, nz, f);
    if (st != CLG_OK)
        return st;
    char mode[16], coords[24], nearest[24];
    clg__oi_string_attr(node, "mode", "nearest", mode, sizeof mode);
    /* before opset 11 the coordinates were asymmetric and nearest took the floor */
    clg__oi_string_attr(node, "coordinate_transformation_mode",
                legacy || opset < 11 ? "asymmetric" : "half_pixel", coords, sizeof coords);
    clg__oi_string_attr(node, "nearest_mode", legacy || opset < 11 ? "floor" : "round_prefer_floor",
                nearest, sizeof nearest);
    int half = !strcmp(coords, "half_pixel") || !strcmp(coords, "pytorch_half_pixel");
    int bilinear = !strcmp(mode, "linear");
    /* whole factors: nearest with half-pixel centres rounds to the same source as the floor of
     * asymmetric coordinates (no ties) */
    int same = bilinear ? half
               : !strcmp(mode, "nearest") &&
                     ((!strcmp(coords, "asymmetric") && !strcmp(nearest, "floor")) ||
                      (half && strncmp(nearest, "round_prefer_", 13) == 0));
    if (!same)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "mode %s with %s coordinates%s%s (clgrad's "
                            "upsample is nearest as PyTorch's, or bilinear with half-pixel "
                            "centres)", mode, coords, bilinear ? "" : " and nearest_mode ",
                            bilinear ? "" : nearest);
    char name[CLG_LAYER_NAME];
    return clg__oi_layer(im, node, k, x->layer, name, "upsample %ld,%ld mode=%s", f[0], f[1],
                         bilinear ? "bilinear" : "nearest");
}
