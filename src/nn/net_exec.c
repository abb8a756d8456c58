/* Running a network on its batch buffers (memory_plan.c): forward (training or inference),
 * loss, backward, prediction in chunks, activations, per-layer profiles, numerics checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "clgrad/norm.h"
#include "nn/layer_table.h"

clg_tensor *clg__net_input_k(clg_net *net, size_t i, size_t k)
{
    size_t from = net->layers[i].from[k];
    return from == CLG_NET_INPUT ? &net->x_n : &net->layers[from].y_n;
}

clg_tensor *clg__net_input(clg_net *net, size_t i)
{
    return clg__net_input_k(net, i, 0);
}

clg_tensor *clg__net_fused_sum(clg_net *net, size_t i, int *relu)
{
    const clg__layer *add = &net->layers[i + 1];
    *relu = add->relu;
    /* the add alone reads it: what it would see is the sum's input */
    net->layers[i].y_n = add->y_n;
    return clg__net_input_k(net, i + 1, add->from[0] == i ? 1 : 0); /* the other input */
}

clg_tensor *clg__net_output_grad(clg_net *net, size_t i)
{
    return &net->layers[i].dy_n;
}

clg_tensor *clg__net_logits(clg_net *net)
{
    return clg__net_input(net, net->count - 1);
}

uint64_t clg__net_dropout_seed(const clg_net *net, size_t layer)
{
    return net->dropout_seed + 0x9E3779B97F4A7C15ull * (layer + 1);
}

static clg_status layer_forward(clg_net *net, size_t i, int train, uint64_t step)
{
    return clg__layer_def_of(net->layers[i].kind)->forward(net, i, train, step);
}

clg_status clg__net_forward(clg_net *net, int train, uint64_t step)
{
    for (size_t i = 0; i < net->count; i++) {
        clg_status st = layer_forward(net, i, train, step);
        if (st != CLG_OK)
            return st;
    }
    return CLG_OK;
}

/* The output's loss over every value (regression, per-pixel classes), or 0 for softmax. */
static int dense_loss_of(const clg_net *net, clg__dense_loss *d)
{
    const clg__layer *out = &net->layers[net->count - 1];
    if (out->kind == CLG_LAYER_REGRESSION)
        *d = (clg__dense_loss){out->regress == CLG_REGRESSION_L1 ? CLG__DENSE_L1 : CLG__DENSE_MSE,
                               NULL};
    else if (out->kind == CLG_LAYER_PIXEL_SOFTMAX)
        *d = (clg__dense_loss){CLG__DENSE_PIXEL, out->saved[0]};
    else
        return 0;
    return 1;
}

size_t clg__net_target_values(const clg_net *net)
{
    if (!net->count)
        return 0;
    const clg__layer *out = &net->layers[net->count - 1];
    switch (net->task) {
    case CLG_TASK_CLASSIFICATION: return 1;
    case CLG_TASK_SEGMENTATION: return out->in.h * out->in.w;
    case CLG_TASK_REGRESSION: return clg_shape_numel(out->in);
    default: return 0;
    }
}

clg_status clg__net_loss(clg_net *net, const void *targets, double *mean_loss, size_t *correct)
{
    clg__dense_loss d;
    net->labels_staged = 0; /* the labels' buffer now holds these */
    if (dense_loss_of(net, &d))
        return clg__dense_forward(net->ctx, &d, clg__net_logits(net), targets, mean_loss, correct);
    return clg_softmax_xent_forward(net->ctx, clg__net_logits(net), targets, net->n, NULL,
                                    mean_loss, correct);
}

clg_status clg__net_loss_begin(clg_net *net, const void *targets)
{
    clg__dense_loss d;
    clg_status st = dense_loss_of(net, &d)
        ? clg__dense_forward_begin(net->ctx, &d, clg__net_logits(net), targets, &net->loss)
        : clg__xent_forward_begin(net->ctx, clg__net_logits(net), targets, net->n, &net->loss);
    net->labels_staged = st == CLG_OK;
    return st;
}

clg_status clg__net_loss_end(clg_net *net, double *mean_loss, size_t *correct)
{
    clg__dense_loss d;
    if (dense_loss_of(net, &d))
        return clg__dense_forward_end(net->ctx, &net->loss, mean_loss, correct);
    return clg__xent_forward_end(net->ctx, &net->loss, mean_loss, correct);
}

/* The gradient of the loss into the output layer's input gradient: from the staged targets
 * after clg__net_loss_begin, else uploading targets now. */
static clg_status loss_backward(clg_net *net, const void *targets, float scale)
{
    clg__dense_loss d;
    clg_tensor *z = clg__net_logits(net), *dz = &net->layers[net->count - 1].dx_n[0];
    int staged = net->labels_staged;
    net->labels_staged = 0;
    if (dense_loss_of(net, &d))
        return staged ? clg__dense_backward_staged(net->ctx, &d, z, scale, dz)
                      : clg__dense_backward(net->ctx, &d, z, targets, scale, dz);
    return staged ? clg__xent_backward_staged(net->ctx, z, scale, dz)
                  : clg_softmax_xent_backward(net->ctx, z, targets, net->n, scale, dz);
}

void clg__net_loss_cancel(clg_net *net)
{
    clg__xent_pending_cancel(&net->loss);
    net->labels_staged = 0;
}

/* Gradients of layer i's parameters and (unless it is the first layer) of its input. */
static clg_status layer_backward(clg_net *net, size_t i, uint64_t step)
{
    const clg__layer_def *def = clg__layer_def_of(net->layers[i].kind);
    clg_status st = !def->backward ? CLG_ERR_INTERNAL
                    : def->gathers_dy ? CLG_OK
                                      : clg__net_gather_dy(net, i);
    return st == CLG_OK ? def->backward(net, i, step) : st;
}

clg_status clg__net_backward_each(clg_net *net, const void *targets, float scale,
                                  uint64_t step, clg_status (*done)(void *user, size_t layer),
                                  void *user)
{
    clg_status st = loss_backward(net, targets, scale);
    for (size_t i = net->count - 1; st == CLG_OK && i-- > 0;) {
        st = layer_backward(net, i, step);
        if (st == CLG_OK && done)
            st = done(user, i);
    }
    return st;
}

clg_status clg__net_backward(clg_net *net, const void *targets, float scale, uint64_t step)
{
    return clg__net_backward_each(net, targets, scale, step, NULL, NULL);
}

/* Chunk of samples predict runs at once when the buffers are not yet larger. */
#define PREDICT_CHUNK 256

clg_status clg_net_predict(clg_net *net, const float *images, size_t n, float *probs)
{
    if (!net || (n && (!images || !probs)))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_predict: net, images and probs must not be NULL");
    if (!n)
        return CLG_OK;
    size_t chunk = n < PREDICT_CHUNK ? n : PREDICT_CHUNK; /* buffers grow to it, never shrink */
    chunk = chunk > net->capacity ? chunk : net->capacity;
    clg_status st = clg__net_reserve_infer(net, chunk);
    if (st != CLG_OK)
        return st;
    size_t per = clg_shape_numel(net->input), out = clg__net_output_values(net);
    /* softmax over C values a stride apart: each sample's classes, or each pixel's */
    size_t C = net->task == CLG_TASK_SEGMENTATION ? net->classes : out;
    size_t stride = net->task == CLG_TASK_SEGMENTATION ? out / C : 1, runs = out / C;
    for (size_t done = 0; done < n && st == CLG_OK;) {
        size_t m = n - done < net->capacity ? n - done : net->capacity;
        st = clg__net_upload(net, images + done * per, m);
        if (st == CLG_OK)
            st = clg__net_forward(net, 0, 0);
        float *p = probs + done * out;
        if (st == CLG_OK)
            st = clg_tensor_download(clg__net_logits(net), p, m * out);
        for (size_t r = 0; st == CLG_OK && net->task != CLG_TASK_REGRESSION && r < m * runs; r++) {
            float *q = p + (r / runs) * out + r % runs; /* stable softmax, in double */
            double top = q[0], sum = 0.0;
            for (size_t c = 1; c < C; c++)
                top = q[c * stride] > top ? q[c * stride] : top;
            for (size_t c = 0; c < C; c++)
                sum += exp((double)q[c * stride] - top);
            for (size_t c = 0; c < C; c++)
                q[c * stride] = (float)(exp((double)q[c * stride] - top) / sum);
        }
        done += m;
    }
    return st;
}

size_t clg__net_output_values(const clg_net *net)
{
    return net->count ? clg_shape_numel(net->layers[net->count - 1].in) : 0;
}

/* Inference forward pass up to and including layer last. */
static clg_status forward_to(clg_net *net, size_t last)
{
    clg_status st = CLG_OK;
    for (size_t i = 0; i <= last && st == CLG_OK; i++)
        st = clg__layer_def_of(net->layers[i].kind)->forward(net, i, 0, 0);
    return st;
}

clg_status clg_net_activations(clg_net *net, const float *images, size_t n, const char *layer,
                               float *out, size_t cap, clg_shape *shape)
{
    if (!net || !layer || (n && (!images || !out)))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_activations: net, layer, images and out must not be NULL");
    size_t at = clg__net_find(net, layer, strlen(layer));
    if (at == CLG__NOT_FOUND || at == CLG_NET_INPUT)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_activations: no layer named "
                         "\"%s\" (names: \"l1\" .. \"l%zu\" and those given)", layer, net->count);
    clg_shape per = net->layers[at].out;
    if (shape)
        *shape = per;
    size_t m = clg_shape_numel(per);
    if (n && cap / n < m)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_activations: %zu samples of %zu "
                         "values need %zu floats, out holds %zu", n, m, n * m, cap);
    if (clg__layer_def_of(net->layers[at].kind)->output)
        return clg_net_predict(net, images, n, out);
    size_t chunk = n < PREDICT_CHUNK ? n : PREDICT_CHUNK;
    chunk = chunk > net->capacity ? chunk : net->capacity;
    clg_status st = n ? clg__net_reserve_infer(net, chunk) : CLG_OK;
    size_t in = clg_shape_numel(net->input);
    net->exact_output = at + 1; /* no ReLU or sum fused into it: its own output */
    clg__net_plan_update(net);
    for (size_t done = 0; done < n && st == CLG_OK;) {
        size_t k = n - done < net->capacity ? n - done : net->capacity;
        st = clg__net_upload(net, images + done * in, k);
        if (st == CLG_OK)
            st = forward_to(net, at);
        if (st == CLG_OK)
            st = clg_tensor_download(&net->layers[at].y_n, out + done * m, k * m);
        done += k;
    }
    net->exact_output = 0;
    clg__net_plan_update(net);
    return st;
}

clg_status clg_net_classify(clg_net *net, const float *images, size_t n, size_t k,
                            int32_t *classes, float *probs)
{
    if (!net || (n && (!images || !classes || !probs)))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_classify: net, images, classes and probs must not be NULL");
    if (!k || k > net->classes)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "clg_net_classify: k = %zu, the net has %zu classes", k, net->classes);
    size_t C = net->classes;
    float *all = clg__malloc((n ? n : 1) * C * sizeof *all);
    if (!all)
        return clg__oom(net->ctx, "clg_net_classify");
    clg_status st = clg_net_predict(net, images, n, all);
    for (size_t s = 0; st == CLG_OK && s < n; s++) {
        const float *p = all + s * C;
        for (size_t j = 0; j < k; j++) { /* selection: ties go to the lower class index */
            int32_t best = -1;
            for (size_t c = 0; c < C; c++) {
                int taken = 0;
                for (size_t t = 0; t < j; t++)
                    taken |= classes[s * k + t] == (int32_t)c;
                if (!taken && (best < 0 || p[c] > p[best]))
                    best = (int32_t)c;
            }
            classes[s * k + j] = best;
            probs[s * k + j] = p[best];
        }
    }
    free(all);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every layer's forward pass alone, the queue drained before and after: run r's times in t
 * (layer i's at t[2 i runs + r]). */
static clg_status time_forward(clg_net *net, int train, int runs, int r, double *t)
{
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < net->count; i++) {
        st = clg_ctx_finish(net->ctx);
        double t0 = clg__now();
        if (st == CLG_OK)
            st = layer_forward(net, i, train, 1);
        if (st == CLG_OK)
            st = clg_ctx_finish(net->ctx);
        t[(2 * i) * (size_t)runs + (size_t)r] = (clg__now() - t0) * 1e3;
    }
    return st;
}

/* The medians of the runs' times into out (backward 0 where not timed). */
static void medians(const clg_net *net, int runs, double *t, clg_layer_time *out)
{
    for (size_t i = 0; i < net->count; i++) {
        double *f = t + 2 * i * (size_t)runs, *b = f + runs;
        qsort(f, (size_t)runs, sizeof *f, cmp_double);
        qsort(b, (size_t)runs, sizeof *b, cmp_double);
        out[i].forward_ms = runs % 2 ? f[runs / 2] : 0.5 * (f[runs / 2 - 1] + f[runs / 2]);
        out[i].backward_ms = runs % 2 ? b[runs / 2] : 0.5 * (b[runs / 2 - 1] + b[runs / 2]);
    }
}

/* A profile's start: the arguments checked, the layout (inference's or training's) for a batch
 * of `batch` inputs of 0.5, and *t zeroed for the runs' times (freed by the caller). */
static clg_status profile_begin(clg_net *net, size_t batch, int runs, clg_layer_time *out,
                                int infer, const char *name, double **t)
{
    *t = NULL;
    if (!net || !out || !batch || runs < 1)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "%s: net and out must not be NULL, batch and runs >= 1", name);
    if (!clg__net_has_output(net)) /* (reserving the training layout says the same) */
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "the net has no softmax output layer yet (add one last)");
    clg_status st = infer ? clg__net_reserve_infer(net, batch) : clg__net_reserve(net, batch);
    *t = st == CLG_OK ? clg__calloc(2 * net->count * (size_t)runs, sizeof **t) : NULL;
    if (st == CLG_OK && !*t)
        st = clg__oom(net->ctx, name);
    if (st == CLG_OK) {
        clg__net_set_batch(net, batch);
        st = clg_tensor_fill(&net->x_n, 0.5f);
    }
    return st;
}

clg_status clg_net_profile_inference(clg_net *net, size_t batch, int runs, clg_layer_time *out)
{
    double *t;
    clg_status st = profile_begin(net, batch, runs, out, 1, "clg_net_profile_inference", &t);
    for (int r = 0; st == CLG_OK && r < runs; r++)
        st = time_forward(net, 0, runs, r, t);
    if (st == CLG_OK)
        medians(net, runs, t, out);
    free(t);
    return st;
}

clg_status clg_net_profile(clg_net *net, size_t batch, int runs, clg_layer_time *out)
{
    double *t;
    clg_status st = profile_begin(net, batch, runs, out, 0, "clg_net_profile", &t);
    int32_t *labels = st == CLG_OK ? clg__calloc(batch * clg__net_target_values(net),
                                                  sizeof *labels) : NULL; /* class 0, or 0.0 */
    if (st == CLG_OK && !labels)
        st = clg__oom(net->ctx, "clg_net_profile");
    for (int r = 0; st == CLG_OK && r < runs; r++) {
        st = time_forward(net, 1, runs, r, t);
        for (size_t i = net->count; st == CLG_OK && i-- > 0;) {
            st = clg_ctx_finish(net->ctx);
            double t0 = clg__now();
            if (st == CLG_OK)
                st = i + 1 == net->count ? loss_backward(net, labels, 1.0f / (float)batch)
                                         : layer_backward(net, i, 1);
            if (st == CLG_OK)
                st = clg_ctx_finish(net->ctx);
            t[(2 * i + 1) * (size_t)runs + (size_t)r] = (clg__now() - t0) * 1e3;
        }
    }
    if (st == CLG_OK)
        medians(net, runs, t, out);
    free(labels);
    free(t);
    return st;
}

static clg_status nonfinite(clg_net *net, size_t layer, const char *what, const clg_tensor *t,
                            uint64_t step, int *found)
{
    size_t bad = 0;
    clg_status st = clg_tensor_count_nonfinite(t, &bad);
    if (st != CLG_OK || !bad)
        return st;
    char text[160];
    clg__layer_text(net, &net->layers[layer], layer, text, sizeof text);
    *found = 1;
    return clg__fail(net->ctx, CLG_ERR_NUMERICS, "numerics check: %zu NaN or infinite values in "
                     "the %s of layer %zu (%s) at step %llu", bad, what, layer + 1, text,
                     (unsigned long long)step);
}

clg_status clg__net_check_numerics(clg_net *net, int backward, uint64_t step)
{
    int found = 0;
    clg_status st = CLG_OK;
    if (!backward) { /* forward order: the first layer whose output went bad */
        for (size_t i = 0; i + 1 < net->count && st == CLG_OK && !found; i++)
            st = nonfinite(net, i, "output", &net->layers[i].y_n, step, &found);
        return st;
    }
    for (size_t i = net->count; i-- > 0 && st == CLG_OK && !found;) { /* backward order */
        clg__layer *l = &net->layers[i];
        static const char *const names[2] = {"weight gradient", "bias or shift gradient"};
        for (size_t p = 0; p < l->nparams && st == CLG_OK && !found; p++)
            st = nonfinite(net, i, names[p], l->grad[p], step, &found);
        if (st == CLG_OK && !found && l->dx[0] &&
            (clg__net_needs_dx(net, i, 0) || clg__layer_def_of(l->kind)->dx_always))
            st = nonfinite(net, i, "input gradient", &l->dx_n[0], step, &found);
    }
    return st;
}
