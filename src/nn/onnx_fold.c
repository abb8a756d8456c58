/* Constant folding at import: the shape arithmetic older exporters write (PyTorch's opset-13
 * exporter computes a channel split from Shape, Gather, Add, Div and Mul, and F.pad's pads
 * from ConstantOfShape, Concat, Reshape, Slice, Transpose and Cast) is evaluated into
 * constants, never layers. Shape of a layer reads its N x C x H x W from the network text
 * written so far; the other operators apply to constants of at most 64 values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/onnx_import_internal.h"

enum { MAX_VALUES = 64 };

/* A constant's values as doubles, its type and dims. */
typedef struct folded {
    double v[MAX_VALUES];
    size_t n, ndims;
    int64_t dims[CLG__ONNX_MAX_DIMS];
    int type;
} folded;

static int read_tensor(importer *im, const Onnx__TensorProto *t, folded *f)
{
    if (!t || !t->has_data_type || t->n_dims > CLG__ONNX_MAX_DIMS)
        return 0;
    f->type = t->data_type, f->ndims = t->n_dims;
    if (t->n_dims) /* a scalar's dims may be NULL, which memcpy must not see even for 0 bytes */
        memcpy(f->dims, t->dims, t->n_dims * sizeof *f->dims);
    if (t->data_type == CLG__ONNX_INT64) {
        int64_t v[MAX_VALUES];
        if (clg__onnx_int64s(im->ctx, t, v, MAX_VALUES, &f->n) != CLG_OK)
            return 0;
        for (size_t i = 0; i < f->n; i++)
            f->v[i] = (double)v[i];
        return 1;
    }
    float *v = NULL;
    int ok = t->data_type == CLG__ONNX_FLOAT && clg__onnx_floats(im->ctx, t, &v, &f->n) == CLG_OK &&
             f->n <= MAX_VALUES;
    for (size_t i = 0; ok && i < f->n; i++)
        f->v[i] = v[i];
    free(v);
    return ok;
}

static int read_const(importer *im, const value *c, folded *f)
{
    return read_tensor(im, c && !c->is_layer ? c->tensor : NULL, f);
}

static clg_status define(importer *im, const Onnx__NodeProto *node, const folded *f)
{
    Onnx__TensorProto *t =
        clg__oi_make_tensor(im, node->output[0], f->type, f->dims, f->ndims);
    if (!t)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "a constant of more values than clgrad "
                            "folds, or out of memory");
    for (size_t i = 0; i < f->n; i++)
        if (f->type == CLG__ONNX_FLOAT)
            t->float_data[i] = (float)f->v[i];
        else
            t->int64_data[i] = (int64_t)f->v[i];
    clg__oi_define(im, node->output[0])->tensor = t;
    return CLG_OK;
}

int clg__oi_layer_shape(importer *im, const value *x, int64_t out[4])
{
    clg_net *spec = NULL;
    if (clg__net_parse_prefix(im->text, &spec) != CLG_OK)
        return 0;
    clg_shape s = clg_net_input_shape(spec);
    int found = !strcmp(x->layer, "input");
    if (!found) {
        size_t at = clg__net_find(spec, x->layer, strlen(x->layer));
        found = at != CLG__NOT_FOUND && at < spec->count;
        if (found)
            s = spec->layers[at].out;
    }
    clg_net_destroy(spec);
    out[0] = im->batch > 0 ? im->batch : -1, out[1] = (int64_t)s.c;
    out[2] = (int64_t)s.h, out[3] = (int64_t)s.w;
    return found;
}

static int shape_of(importer *im, const Onnx__NodeProto *node, folded *f)
{
    value *x = node->n_input == 1 ? clg__oi_find(im, node->input[0]) : NULL;
    int64_t d[4];
    if (!x || (x->is_layer && (x->flat || x->groups || !clg__oi_layer_shape(im, x, d))))
        return 0;
    size_t rank = x->is_layer ? 4 : x->tensor->n_dims;
    long lo = clg__oi_int_attr(node, "start", 0), hi = clg__oi_int_attr(node, "end", (long)rank);
    lo = lo < 0 ? lo + (long)rank : lo, hi = hi < 0 ? hi + (long)rank : hi;
    lo = lo < 0 ? 0 : lo > (long)rank ? (long)rank : lo;
    hi = hi < lo ? lo : hi > (long)rank ? (long)rank : hi;
    f->type = CLG__ONNX_INT64, f->ndims = 1, f->n = (size_t)(hi - lo), f->dims[0] = hi - lo;
    for (long i = lo; i < hi; i++)
        f->v[i - lo] = (double)(x->is_layer ? d[i] : x->tensor->dims[i]);
    return 1;
}

/* Elementwise arithmetic with a scalar (or one-value) operand spread over the other. */
static int arithmetic(char op, const folded *a, const folded *b, folded *f)
{
    const folded *big = a->n >= b->n ? a : b;
    if (a->n != b->n && a->n != 1 && b->n != 1)
        return 0;
    *f = *big;
    f->type = a->type;
    for (size_t i = 0; i < f->n; i++) {
        double x = a->v[a->n == 1 ? 0 : i], y = b->v[b->n == 1 ? 0 : i];
        double r = op == 'A' ? x + y : op == 'S' ? x - y : op == 'M' ? x * y : y != 0 ? x / y : NAN;
        if (op == 'D' && f->type == CLG__ONNX_INT64) /* integer division truncates */
            r = trunc(r);
        if (isnan(r))
            return 0;
        f->v[i] = r;
    }
    return 1;
}

/* ConstantOfShape: the attribute's one value (float 0 without it) over the input's shape. */
static int constant_of_shape(importer *im, const Onnx__NodeProto *node, const folded *shape,
                             folded *f)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, "value");
    folded value = {.v = {0}, .n = 1, .type = CLG__ONNX_FLOAT};
    if (a && a->t && (!read_tensor(im, a->t, &value) || value.n != 1))
        return 0;
    double v = value.v[0];
    f->type = value.type;
    size_t n = 1;
    if (shape->ndims > 1 || shape->n > CLG__ONNX_MAX_DIMS)
        return 0;
    for (size_t i = 0; i < shape->n; i++) {
        if (shape->v[i] < 0 || shape->v[i] > MAX_VALUES)
            return 0;
        n *= (size_t)shape->v[i];
        f->dims[i] = (int64_t)shape->v[i];
    }
    if (n > MAX_VALUES)
        return 0;
    f->ndims = shape->n, f->n = n;
    for (size_t i = 0; i < n; i++)
        f->v[i] = v;
    return 1;
}

/* Reshape of a constant: 0 keeps the dimension, one -1 takes what is left. */
static int reshape_const(const folded *x, const folded *shape, folded *f)
{
    *f = *x;
    if (shape->ndims > 1 || shape->n > CLG__ONNX_MAX_DIMS)
        return 0;
    size_t known = 1, free_at = shape->n;
    for (size_t i = 0; i < shape->n; i++) {
        double d = shape->v[i] == 0 && i < x->ndims ? (double)x->dims[i] : shape->v[i];
        if (d == -1 && free_at == shape->n)
            free_at = i;
        else if (d >= 0 && d <= MAX_VALUES)
            known *= (size_t)d, f->dims[i] = (int64_t)d;
        else
            return 0;
    }
    if (free_at < shape->n)
        f->dims[free_at] = known ? (int64_t)(x->n / known) : 0;
    f->ndims = shape->n;
    return free_at < shape->n ? known && x->n % known == 0 : known == x->n;
}

/* Strides of a folded constant's dims (row-major). */
static void strides_of(const folded *x, size_t st[CLG__ONNX_MAX_DIMS])
{
    size_t s = 1;
    for (size_t i = x->ndims; i-- > 0;)
        st[i] = s, s *= (size_t)x->dims[i];
}

/* Transpose of a constant (perm, or the axes reversed). */
static int transpose_const(const Onnx__NodeProto *node, const folded *x, folded *f)
{
    const Onnx__AttributeProto *a = clg__onnx_attr(node, "perm");
    size_t r = x->ndims, perm[CLG__ONNX_MAX_DIMS], st[CLG__ONNX_MAX_DIMS], seen = 0;
    if (a && a->n_ints != r)
        return 0;
    for (size_t i = 0; i < r; i++) {
        perm[i] = a ? (size_t)a->ints[i] : r - 1 - i;
        if (perm[i] >= r || seen & (1u << perm[i]))
            return 0;
        seen |= 1u << perm[i];
    }
    strides_of(x, st);
    *f = *x;
    for (size_t i = 0; i < r; i++)
        f->dims[i] = x->dims[perm[i]];
    for (size_t o = 0; o < x->n; o++) { /* output index o's coordinates, read through perm */
        size_t rest = o, from = 0;
        for (size_t i = r; i-- > 0;) {
            size_t c = rest % (size_t)f->dims[i];
            rest /= (size_t)f->dims[i];
            from += c * st[perm[i]];
        }
        f->v[o] = x->v[from];
    }
    return 1;
}

/* Slice of a constant (opset 10 on: starts, ends, axes, steps as inputs), ONNX's clamping. */
static int slice_const(const folded *in, size_t nin, folded *f)
{
    const folded *x = &in[0];
    size_t r = x->ndims, st[CLG__ONNX_MAX_DIMS];
    double lo[CLG__ONNX_MAX_DIMS], step[CLG__ONNX_MAX_DIMS];
    size_t count[CLG__ONNX_MAX_DIMS];
    if (nin < 3 || in[1].n != in[2].n || (nin > 3 && in[3].n != in[1].n) ||
        (nin > 4 && in[4].n != in[1].n))
        return 0;
    for (size_t i = 0; i < r; i++)
        lo[i] = 0, step[i] = 1, count[i] = (size_t)x->dims[i];
    for (size_t k = 0; k < in[1].n; k++) {
        double axis = nin > 3 ? in[3].v[k] : (double)k, sp = nin > 4 ? in[4].v[k] : 1;
        axis = axis < 0 ? axis + (double)r : axis;
        if (axis < 0 || axis >= (double)r || sp == 0)
            return 0;
        size_t a = (size_t)axis;
        double d = (double)x->dims[a], s = in[1].v[k], e = in[2].v[k];
        s = s < 0 ? s + d : s, e = e < 0 ? e + d : e;
        s = sp > 0 ? fmin(fmax(s, 0), d) : fmin(fmax(s, 0), d - 1);
        e = sp > 0 ? fmin(fmax(e, 0), d) : fmin(fmax(e, -1), d - 1);
        double n = ceil((e - s) / sp);
        lo[a] = s, step[a] = sp, count[a] = n > 0 ? (size_t)n : 0;
    }
    strides_of(x, st);
    *f = *x;
    f->n = 1;
    for (size_t i = 0; i < r; i++)
        f->dims[i] = (int64_t)count[i], f->n *= count[i];
    for (size_t o = 0; o < f->n; o++) {
        size_t rest = o, from = 0;
        for (size_t i = r; i-- > 0;) {
            size_t c = rest % count[i];
            rest /= count[i];
            from += (size_t)(lo[i] + (double)c * step[i]) * st[i];
        }
        f->v[o] = x->v[from];
    }
    return 1;
}

clg_status clg__oi_fold(importer *im, const Onnx__NodeProto *node, int *done)
{
    static const char *const ops[] = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast",
                                      "Add", "Sub", "Mul", "Div", "ConstantOfShape", "Reshape",
                                      "Slice", "Transpose"};
    const char *op = node->op_type ? node->op_type : "";
    int known = 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !known; i++)
        known = !strcmp(op, ops[i]);
    *done = 0;
    /* every input a constant (Shape: a layer too); else the node is a layer's business */
    folded in[5];
    size_t nin = node->n_input < 5 ? node->n_input : 5;
    for (size_t i = 0; known && strcmp(op, "Shape") && i < node->n_input; i++)
        known = i < 5 && node->input[i][0] && read_const(im, clg__oi_find(im, node->input[i]), &in[i]);
    if (!known || !node->n_output)
        return CLG_OK;
    folded f;
    memset(&f, 0, sizeof f);
    int ok = 0;
    if (!strcmp(op, "Shape")) {
        ok = shape_of(im, node, &f);
    } else if (!strcmp(op, "Gather") && nin == 2 && in[0].ndims == 1 &&
               clg__oi_int_attr(node, "axis", 0) == 0) {
        f = in[1], f.type = in[0].type, ok = 1;
        for (size_t i = 0; ok && i < f.n; i++) {
            long k = (long)in[1].v[i] < 0 ? (long)in[1].v[i] + (long)in[0].n : (long)in[1].v[i];
            ok = k >= 0 && k < (long)in[0].n;
            f.v[i] = ok ? in[0].v[k] : 0;
        }
    } else if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) {
        /* the values as they are; the dims: one axis of 1 for a scalar, none for one value */
        f = in[0], ok = f.n <= 1 || f.ndims <= 1;
        f.ndims = op[0] == 'U' ? (f.ndims ? f.ndims + (f.n == 1) : 1) : (f.n == 1 ? 0 : 1);
        f.dims[0] = (int64_t)f.n;
    } else if (!strcmp(op, "Concat") && clg__oi_int_attr(node, "axis", 0) == 0) {
        f.type = in[0].type, f.ndims = 1, ok = 1;
        for (size_t i = 0; ok && i < nin; i++) {
            ok = in[i].ndims <= 1 && f.n + in[i].n <= MAX_VALUES && in[i].type == f.type;
            for (size_t j = 0; ok && j < in[i].n; j++)
                f.v[f.n++] = in[i].v[j];
        }
        f.dims[0] = (int64_t)f.n;
    } else if (!strcmp(op, "Cast")) {
        long to = clg__oi_int_attr(node, "to", 0);
        f = in[0], ok = to == CLG__ONNX_FLOAT || to == CLG__ONNX_INT64;
        f.type = (int)to;
        for (size_t i = 0; ok && to == CLG__ONNX_INT64 && i < f.n; i++)
            f.v[i] = trunc(f.v[i]);
    } else if (!strcmp(op, "ConstantOfShape") && nin == 1) {
        ok = constant_of_shape(im, node, &in[0], &f);
    } else if (!strcmp(op, "Reshape") && nin == 2) {
        ok = reshape_const(&in[0], &in[1], &f);
    } else if (!strcmp(op, "Transpose") && nin == 1) {
        ok = transpose_const(node, &in[0], &f);
    } else if (!strcmp(op, "Slice")) {
        ok = slice_const(in, nin, &f);
    } else if (nin == 2 && in[0].type == in[1].type) {
        ok = arithmetic(op[0], &in[0], &in[1], &f);
    }
    if (!ok)
        return clg__oi_fail(im, CLG_ERR_UNSUPPORTED, "%s of constants in a form clgrad does not "
                            "fold", op);
    *done = 1;
    return define(im, node, &f);
}
