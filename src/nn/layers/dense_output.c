/* Layer entries: the outputs whose loss covers every output value (dense_loss.c):
 * "regression" (loss=mse, half mean squared error, or loss=l1; MATLAB's regressionLayer) and
 * "pixelsoftmax" (softmax over the channels at each pixel with cross-entropy against a label
 * map, weights=W0,W1,... per class; MATLAB's pixelClassificationLayer). Like softmax, each
 * one's output is its input; the loss reads it and gives its gradient (net_exec.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"
#include "nn/onnx_writer.h"

static clg_status regression_option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (clg__option_is(o, "loss")) {
        if (o->vlen == 3 && !strncmp(o->v, "mse", 3))
            l->regress = CLG_REGRESSION_MSE;
        else if (o->vlen == 2 && !strncmp(o->v, "l1", 2))
            l->regress = CLG_REGRESSION_L1;
        else
            return clg__option_bad(p, o, "mse or l1");
        return CLG_OK;
    }
    return clg__option_unknown(p, o, "regression", "loss");
}

static clg_status regression_parse(const clg__parser *p, const clg__token *tok, size_t ntok,
                                   clg__layer *l)
{
    l->regress = CLG_REGRESSION_MSE;
    return clg__layer_options(p, tok, ntok, 1, l, regression_option);
}

static void regression_format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "regression%s", l->regress == CLG_REGRESSION_L1 ? " loss=l1" : "");
}

static clg_status regression_check(const clg__layer *l, char *why, size_t cap)
{
    if ((unsigned)l->regress <= CLG_REGRESSION_L1)
        return CLG_OK;
    snprintf(why, cap, "unknown regression loss %d", (int)l->regress);
    return CLG_ERR_INVALID_ARG;
}

static clg_status output_forward(clg_net *net, size_t i, int train, uint64_t step)
{
    (void)net, (void)i, (void)train, (void)step;
    return CLG_OK; /* the loss reads its input */
}

static double regression_flops(const clg__layer *l)
{
    return 3.0 * (double)clg_shape_numel(l->in); /* difference, square, sum */
}

/* The output as it is, named "output" (N x C x H x W, or N x values). */
static void regression_export(clg__onnx_out *ex, size_t i)
{
    clg__onnx_node(ex, "Identity", "output", clg__onnx_input(ex, i, 0), NULL, NULL);
    clg__onnx_keep_rank(ex, i);
}

static const char *const regression_words[] = {"regression", NULL};

const clg__layer_def clg__layer_regression = {
    .kind = CLG_LAYER_REGRESSION, .keywords = regression_words, .parse = regression_parse,
    .format = regression_format, .check = regression_check, .forward = output_forward,
    .flops = regression_flops, .output = 1, .task = CLG_TASK_REGRESSION,
    .view = CLG__VIEW_ALWAYS, .onnx_export = regression_export,
};

static clg_status pixel_option(const clg__parser *p, const clg__option *o, clg__layer *l)
{
    if (!clg__option_is(o, "weights"))
        return clg__option_unknown(p, o, "pixelsoftmax", "weights");
    size_t n = 0;
    for (const char *s = o->v, *end = o->v + o->vlen; s < end; n++) {
        char buf[64], *stop;
        const char *comma = memchr(s, ',', (size_t)(end - s));
        size_t len = (size_t)((comma ? comma : end) - s);
        if (n == CLG_CLASS_WEIGHTS_MAX || !len || len >= sizeof buf)
            return clg__option_bad(p, o, "at most 256 weights >= 0, comma-separated");
        memcpy(buf, s, len);
        buf[len] = '\0';
        double v = strtod(buf, &stop);
        if (*stop || !(v >= 0.0) || v > 1e30)
            return clg__option_bad(p, o, "weights >= 0, comma-separated");
        l->class_w[n] = (float)v;
        s += len + (comma != NULL);
    }
    l->nclass_w = n;
    return CLG_OK;
}

static clg_status pixel_parse(const clg__parser *p, const clg__token *tok, size_t ntok,
                              clg__layer *l)
{
    l->nclass_w = 0;
    return clg__layer_options(p, tok, ntok, 1, l, pixel_option);
}

static void pixel_format(const clg__layer *l, const char *inputs, clg__text_out *o)
{
    (void)inputs;
    clg__text_put(o, "pixelsoftmax");
    for (size_t k = 0; k < l->nclass_w; k++)
        clg__text_put(o, "%s%.9g", k ? "," : " weights=", (double)l->class_w[k]);
}

static clg_status pixel_check(const clg__layer *l, char *why, size_t cap)
{
    for (size_t k = 0; k < l->nclass_w; k++)
        if (!(l->class_w[k] >= 0.0f) || l->class_w[k] > 1e30f) {
            snprintf(why, cap, "class weight %zu is %g: weights are finite and >= 0", k,
                     (double)l->class_w[k]);
            return CLG_ERR_INVALID_ARG;
        }
    return l->nclass_w <= CLG_CLASS_WEIGHTS_MAX ? CLG_OK : CLG_ERR_INVALID_ARG;
}

static clg_status pixel_infer(const clg__layer *l, clg_shape *out, char *why, size_t cap)
{
    if (l->in.c < 2) {
        snprintf(why, cap, "needs at least 2 classes (channels), its input has %zu", l->in.c);
        return CLG_ERR_SHAPE;
    }
    if (l->nclass_w && l->nclass_w != l->in.c) {
        snprintf(why, cap, "%zu class weights for %zu classes (channels)", l->nclass_w, l->in.c);
        return CLG_ERR_SHAPE;
    }
    *out = l->in;
    return CLG_OK;
}

/* The class weights on the device, for the loss's kernels. */
static clg_status pixel_alloc(clg_net *net, clg__layer *l)
{
    if (!l->nclass_w)
        return CLG_OK;
    clg_status st = clg__layer_tensor(net, (clg_shape){1, l->nclass_w, 1, 1}, 0.0f, &l->saved[0]);
    return st == CLG_OK ? clg_tensor_upload(l->saved[0], l->class_w, l->nclass_w) : st;
}

static double pixel_flops(const clg__layer *l)
{
    return 3.0 * (double)clg_shape_numel(l->in); /* exp, sum, divide */
}

/* Softmax over the channels: "probabilities", N x K x H x W. */
static void pixel_export(clg__onnx_out *ex, size_t i)
{
    Onnx__NodeProto *n =
        clg__onnx_node(ex, "Softmax", "probabilities", clg__onnx_input(ex, i, 0), NULL, NULL);
    clg__onnx_attr_int(ex, n, "axis", 1);
    clg__onnx_keep_rank(ex, i);
}

static const char *const pixel_words[] = {"pixelsoftmax", NULL};

const clg__layer_def clg__layer_pixel_softmax = {
    .kind = CLG_LAYER_PIXEL_SOFTMAX, .keywords = pixel_words, .parse = pixel_parse,
    .format = pixel_format, .check = pixel_check, .infer = pixel_infer, .alloc = pixel_alloc,
    .forward = output_forward, .flops = pixel_flops, .output = 1, .task = CLG_TASK_SEGMENTATION,
    .view = CLG__VIEW_ALWAYS, .onnx_export = pixel_export,
};

/* The builder's calls (nn.h). */
clg_status clg_net_add_regression(clg_net *net, clg_regression_loss loss)
{
    clg__layer l = {.kind = CLG_LAYER_REGRESSION, .regress = loss};
    return clg__net_append(net, &l, "clg_net_add_regression");
}

clg_status clg_net_add_pixel_softmax(clg_net *net, const float *weights, size_t count)
{
    clg__layer l = {.kind = CLG_LAYER_PIXEL_SOFTMAX};
    if (count > CLG_CLASS_WEIGHTS_MAX || (count && !weights))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_net_add_pixel_softmax: "
                         "at most %d class weights, not NULL", CLG_CLASS_WEIGHTS_MAX);
    if (count)
        memcpy(l.class_w, weights, count * sizeof *weights);
    l.nclass_w = count;
    return clg__net_append(net, &l, "clg_net_add_pixel_softmax");
}

clg_status clg_net_set_class_weights(clg_net *net, const float *weights, size_t count)
{
    const char *call = "clg_net_set_class_weights";
    if (!net || (count && !weights))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG, "%s: net and weights must "
                         "not be NULL", call);
    clg__layer *l = net->count ? &net->layers[net->count - 1] : NULL;
    if (!l || l->kind != CLG_LAYER_PIXEL_SOFTMAX || (count && count != l->in.c))
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: %s", call,
                         !l || l->kind != CLG_LAYER_PIXEL_SOFTMAX
                             ? "the net's output is not a pixelsoftmax layer"
                             : "one weight per class (channel of its input)");
    clg__layer trial = *l;
    if (count)
        memcpy(trial.class_w, weights, count * sizeof *weights);
    trial.nclass_w = count;
    char why[160];
    if (pixel_check(&trial, why, sizeof why) != CLG_OK)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: %s", call, why);
    clg_tensor_destroy(l->saved[0]);
    l->saved[0] = NULL;
    memcpy(l->class_w, trial.class_w, sizeof l->class_w);
    l->nclass_w = count;
    return pixel_alloc(net, l);
}
