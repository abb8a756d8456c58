/* ONNX import of the channel operations of ShuffleNet-style networks: Split along the
 * channels (sizes as an attribute to opset 12, an input from 13, or num_outputs from 18) as
 * one slice layer per output, and the channel shuffle PyTorch writes as Reshape to
 * N x groups x C/groups x H x W, Transpose of the two channel axes and Reshape back. */
#include <stdio.h>
#include <string.h>

#include "nn/onnx_import_internal.h"

clg_status clg__oi_split(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x;
    int64_t sizes[64];
    size_t n = 0;
    clg_status st = clg__oi_known_attrs(im, node, "axis,split,num_outputs");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    if (st == CLG_OK) /* an input from opset 13 */
        st = clg__oi_int_list(im, node, 1, "split", sizes, 64, &n);
    if (st != CLG_OK)
        return st;
    long axis = clg__oi_int_attr(node, "axis", 0);
    if (x->flat || (axis != 1 && axis != -3))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a split along axis %ld (clgrad splits the "
                            "channels of N x C x H x W: axis 1)", axis);
    if (n && n != node->n_output)
        return clg__oi_fail(im, CLG_ERR_CORRUPT, "%zu sizes for %zu outputs", n, node->n_output);
    char name[CLG_LAYER_NAME];
    int64_t at = 0;
    for (size_t j = 0; st == CLG_OK && j < node->n_output; j++) {
        if (n && sizes[j] < 1)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a part of %lld channels",
                                (long long)sizes[j]);
        if (!node->output[j][0]) { /* an output nothing reads */
            at += n ? sizes[j] : 0;
            continue;
        }
        /* given sizes: those channels; num_outputs (or none: equal parts) resolved once the
         * input's channels are known */
        st = n ? clg__oi_layer_as(im, node->output[j], k, x->layer, name, "slice %lld:%lld",
                                  (long long)at, (long long)(at + sizes[j]))
               : clg__oi_layer_as(im, node->output[j], k, x->layer, name, "slice %zu/%zu", j,
                                  node->n_output);
        at += n ? sizes[j] : 0;
    }
    return st;
}

/* perm [0, 2, 1, 3, 4] as Transpose's attribute. */
static int swaps_groups(const Onnx__NodeProto *t)
{
    const Onnx__AttributeProto *p = clg__onnx_attr(t, "perm");
    static const int64_t want[5] = {0, 2, 1, 3, 4};
    return p && p->n_ints == 5 && !memcmp(p->ints, want, sizeof want);
}

/* The shape a Reshape node reshapes to (a constant), into s (at most 8); its count. */
static size_t target_shape(importer *im, const Onnx__NodeProto *r, int64_t s[8])
{
    value *shape = r->n_input == 2 ? clg__oi_find(im, r->input[1]) : NULL;
    size_t n = 0;
    if (!shape || shape->is_layer || clg__onnx_int64s(im->ctx, shape->tensor, s, 8, &n) != CLG_OK)
        return 0;
    return n;
}

/* A layer's output to N x g x C/g x H x W (a view: no layer), that view's channel axes
 * transposed (another view), and the transposed view back to N x C x H x W: "shuffle g".
 * Anything else reading the views is refused (clg__oi_input). */
clg_status clg__oi_shuffle_step(importer *im, const Onnx__NodeProto *node, size_t k, int *done)
{
    *done = 0;
    value *x = node->n_input >= 1 ? clg__oi_find(im, node->input[0]) : NULL;
    int64_t s[8];
    size_t n = node->op_type[0] == 'R' ? target_shape(im, node, s) : 0;
    if (!x || !x->is_layer || x->flat)
        return CLG_OK;
    if (!x->groups && n == 5 && s[1] > 0 && s[2] > 0) { /* the first Reshape */
        clg__oi_alias(im, node, x, 0);
        clg__oi_find(im, node->output[0])->groups = (int)s[1];
    } else if (x->groups && !x->swapped && node->op_type[0] == 'T' && swaps_groups(node)) {
        int g = x->groups;
        clg__oi_alias(im, node, x, 0);
        value *v = clg__oi_find(im, node->output[0]);
        v->groups = g, v->swapped = 1;
    } else if (x->groups && x->swapped && n == 4 && s[1] != 0) { /* back to 4-D: the layer */
        char name[CLG_LAYER_NAME];
        clg_status st = clg__oi_layer(im, node, k, x->layer, name, "shuffle %d", x->groups);
        if (st != CLG_OK)
            return st;
    } else {
        return CLG_OK;
    }
    *done = 1;
    return CLG_OK;
}

/* Slice along the channels with constant bounds and step 1 (starts, ends, axes, steps as
 * inputs from opset 10, attributes before): "slice A:B". */
/* A Slice over H and W (a crop, as U-Net code writes x[:, :, a:b, c:d]): a pad layer with
 * negative pads, from the input's size. */
static clg_status spatial_slice(importer *im, const Onnx__NodeProto *node, size_t k,
                                const value *x, int64_t b[4][8], const size_t n[4])
{
    int64_t d[4], lo[2] = {0, 0}, hi[2];
    if (!clg__oi_layer_shape(im, x, d))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a slice of H or W of a tensor of unknown "
                            "size");
    hi[0] = d[2], hi[1] = d[3];
    for (size_t j = 0; j < n[2]; j++) {
        int64_t axis = b[2][j] < 0 ? b[2][j] + 4 : b[2][j], size = axis == 2 ? d[2] : d[3];
        int64_t start = b[0][j] < 0 ? b[0][j] + size : b[0][j];
        int64_t end = b[1][j] < 0 ? b[1][j] + size : b[1][j] > size ? size : b[1][j];
        if ((axis != 2 && axis != 3) || (n[3] && b[3][j] != 1) || start < 0 || end <= start)
            return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a slice of H and W other than a window "
                                "with step 1");
        lo[axis - 2] = start, hi[axis - 2] = end;
    }
    char name[CLG_LAYER_NAME];
    return clg__oi_layer(im, node, k, x->layer, name, "pad %lld,%lld,%lld,%lld", -(long long)lo[0],
                         -(long long)(d[2] - hi[0]), -(long long)lo[1], -(long long)(d[3] - hi[1]));
}

clg_status clg__oi_slice(importer *im, const Onnx__NodeProto *node, size_t k)
{
    value *x;
    clg_status st = clg__oi_known_attrs(im, node, "starts,ends,axes");
    if (st == CLG_OK)
        st = clg__oi_input(im, node, 0, 0, &x);
    int64_t b[4][8]; /* starts, ends, axes, steps (no attribute: steps came with the inputs) */
    size_t n[4] = {0, 0, 0, 0};
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    for (size_t j = 0; st == CLG_OK && j < 4; j++)
        st = clg__oi_int_list(im, node, j + 1, names[j], b[j], 8, &n[j]);
    if (st != CLG_OK)
        return st;
    int64_t axis = n[2] ? b[2][0] : 0;
    if (!x->flat && n[2] >= 1 && n[2] <= 2 && n[0] == n[2] && n[1] == n[2] &&
        (axis == 2 || axis == 3 || axis == -1 || axis == -2))
        return spatial_slice(im, node, k, x, b, n);
    if (x->flat || n[0] != 1 || n[1] != 1 || n[2] > 1 || (axis != 1 && axis != -3) ||
        (n[3] && (n[3] != 1 || b[3][0] != 1)) || b[0][0] < 0 || b[1][0] <= b[0][0] ||
        b[1][0] > (1 << 24))
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a slice other than of channels [A, B) with "
                            "0 <= A < B and step 1 (clgrad's slice layer)");
    char name[CLG_LAYER_NAME];
    return clg__oi_layer(im, node, k, x->layer, name, "slice %lld:%lld", (long long)b[0][0],
                         (long long)b[1][0]);
}
