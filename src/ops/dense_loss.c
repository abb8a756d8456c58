/* Losses over every output value (kernels in dense_loss.cl): regression against float targets
 * and per-pixel softmax cross-entropy. Targets are checked on the host and staged through a
 * pooled buffer (pixel class weights after them); each sample's loss and correct-pixel count
 * come back and are reduced on the host in double, in sample order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "ops/loss_internal.h"
#include "tensor/tensor_internal.h"

enum { DENSE_LOCAL = 64 }; /* the forward kernels' work-group (dense_loss.cl) */

/* Sizes of the loss's output: N samples of R values; for pixels R = K x HW. */
typedef struct dense_dims {
    size_t N, R, K, HW;
} dense_dims;

static clg_status dims_of(clg_ctx *ctx, const char *call, const clg__dense_loss *d,
                          const clg_tensor *out, dense_dims *dd)
{
    const clg_tensor *t[1] = {out};
    clg_status st = clg__tensors_check(ctx, call, t, 1);
    if (st != CLG_OK)
        return st;
    dd->N = out->shape.n;
    dd->R = clg_tensor_numel(out) / dd->N;
    dd->K = d->kind == CLG__DENSE_PIXEL ? out->shape.c : 1;
    dd->HW = d->kind == CLG__DENSE_PIXEL ? out->shape.h * out->shape.w : dd->R;
    if (d->kind == CLG__DENSE_PIXEL && dd->K < 2)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: per-pixel classes are the channels: at least "
                         "2, the logits have %zu", call, dd->K);
    if (d->weights && clg_tensor_numel(d->weights) != dd->K)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: %zu class weights for %zu classes", call,
                         clg_tensor_numel(d->weights), dd->K);
    return CLG_OK;
}

/* Elements of the staged targets (N x HW labels, or N x R values). */
static size_t target_count(const clg__dense_loss *d, const dense_dims *dd)
{
    return dd->N * (d->kind == CLG__DENSE_PIXEL ? dd->HW : dd->R);
}

static clg_status check_labels(clg_ctx *ctx, const char *call, const int32_t *labels, size_t n,
                               size_t K)
{
    for (size_t i = 0; i < n; i++)
        if (labels[i] != CLG_LABEL_IGNORE && (labels[i] < 0 || (size_t)labels[i] >= K))
            return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: label %d at pixel %zu is outside "
                             "0..%zu (and not %d, ignored)", call, (int)labels[i], i, K - 1,
                             CLG_LABEL_IGNORE);
    return CLG_OK;
}

/* Checks the targets and queues their upload (and host weights', after them) into the
 * labels' scratch buffer. */
static clg_status stage(clg_ctx *ctx, const char *call, const clg__dense_loss *d,
                        const dense_dims *dd, const void *targets, size_t n_targets,
                        const float *host_w, cl_bool blocking, cl_mem *buf)
{
    size_t count = target_count(d, dd);
    if (!targets)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: targets must not be NULL", call);
    if (n_targets != count)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: %zu targets for %zu samples of %zu", call,
                         n_targets, dd->N, count / dd->N);
    clg_status st = d->kind == CLG__DENSE_PIXEL ? check_labels(ctx, call, targets, count, dd->K)
                                                 : CLG_OK;
    for (size_t k = 0; st == CLG_OK && host_w && k < dd->K; k++)
        if (!(host_w[k] >= 0.0f) || isinf(host_w[k]))
            st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: class weight %zu is %g: weights are "
                           "finite and >= 0", call, k, (double)host_w[k]);
    size_t wbytes = host_w ? dd->K * sizeof(float) : 0;
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LABELS, count * 4 + wbytes, buf);
    if (st != CLG_OK)
        return st;
    cl_int err = clEnqueueWriteBuffer(ctx->queue, *buf, blocking, 0, count * 4, targets, 0,
                                      NULL, NULL);
    if (err == CL_SUCCESS && host_w)
        err = clEnqueueWriteBuffer(ctx->queue, *buf, blocking, count * 4, wbytes, host_w, 0,
                                   NULL, NULL);
    return err == CL_SUCCESS ? CLG_OK : clg__fail_cl(ctx, err, "%s: uploading targets", call);
}

/* The class weights' buffer and element offset: the layer's tensor, the staged host weights
 * after the targets, or none. */
static void weights_arg(const clg__dense_loss *d, const dense_dims *dd, cl_mem staged,
                        int host_w, clg__launch *l)
{
    if (d->weights) {
        clg__arg_tensor(l, d->weights);
    } else {
        clg__arg_mem(l, staged);
        clg__arg_u64(l, host_w ? target_count(d, dd) : 0);
    }
    clg__arg_u32(l, d->weights || host_w);
}

static clg_status launch_forward(clg_ctx *ctx, const clg__dense_loss *d, const dense_dims *dd,
                                 const clg_tensor *out, cl_mem targets, int host_w, cl_mem losses)
{
    int pixel = d->kind == CLG__DENSE_PIXEL;
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "dense_loss", NULL,
                                      pixel ? "clg_pixel_xent_fwd" : "clg_regress_fwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, out);
    clg__arg_mem(&l, targets);
    clg__arg_u32(&l, dd->N);
    if (pixel) {
        clg__arg_u32(&l, dd->K);
        clg__arg_u32(&l, dd->HW);
        weights_arg(d, dd, targets, host_w, &l);
    } else {
        clg__arg_u32(&l, dd->R);
        clg__arg_u32(&l, d->kind == CLG__DENSE_L1);
    }
    clg__arg_mem(&l, losses);
    size_t global[3] = {dd->N * DENSE_LOCAL, 1, 1}, local[3] = {DENSE_LOCAL, 1, 1};
    return clg__launch_run(&l, global, local);
}

static clg_status launch_backward(clg_ctx *ctx, const clg__dense_loss *d, const dense_dims *dd,
                                  const clg_tensor *out, cl_mem targets, int host_w, float scale,
                                  clg_tensor *dout)
{
    int pixel = d->kind == CLG__DENSE_PIXEL;
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "dense_loss", NULL,
                                      pixel ? "clg_pixel_xent_bwd" : "clg_regress_bwd", &l);
    if (st != CLG_OK)
        return st;
    size_t count = dd->N * dd->R;
    clg__arg_tensor(&l, out);
    clg__arg_mem(&l, targets);
    if (!pixel) {
        clg__arg_u64(&l, count);
        clg__arg_u32(&l, dd->R);
        clg__arg_u32(&l, d->kind == CLG__DENSE_L1);
        clg__arg_f32(&l, scale);
        clg__arg_tensor(&l, dout);
        return clg__launch_elementwise(&l, count);
    }
    clg__arg_u32(&l, dd->K);
    clg__arg_u32(&l, dd->HW);
    weights_arg(d, dd, targets, host_w, &l);
    clg__arg_f32(&l, scale);
    clg__arg_tensor(&l, dout);
    /* runs of 8 pixels by samples; CPUs: 32 runs a work-group (a launch each costs ~1 us) */
    size_t local = clg_ctx_decides_as_gpu(ctx) ? 64 : 32;
    size_t global[3] = {(dd->HW + 7) / 8, dd->N, 1}, loc[3] = {local, 1, 1};
    return clg__launch_run(&l, global, loc);
}

static clg_status check_grad(clg_ctx *ctx, const char *call, const clg_tensor *out,
                             const clg_tensor *dout)
{
    if (!dout)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: the gradient must not be NULL", call);
    return clg__tensor_expect_shape(ctx, call, "the gradient", dout, out->shape);
}

/* The mean of N losses in sample order, in double, and the hits (losses[N..2N)) added. */
static void reduce(const float *losses, size_t N, double *mean_loss, size_t *correct)
{
    double sum = 0.0, hits = 0.0;
    for (size_t i = 0; i < N; i++) {
        sum += losses[i];
        hits += losses[N + i];
    }
    if (mean_loss)
        *mean_loss = sum / (double)N;
    if (correct)
        *correct = (size_t)hits;
}

/* The whole forward pass, blocking: the public calls and evaluation. */
static clg_status forward_now(clg_ctx *ctx, const char *call, const clg__dense_loss *d,
                              const clg_tensor *out, const void *targets, size_t n_targets,
                              const float *host_w, double *mean_loss, size_t *correct)
{
    dense_dims dd = {0, 0, 0, 0};
    cl_mem buf = NULL, losses = NULL;
    clg_status st = dims_of(ctx, call, d, out, &dd);
    if (st == CLG_OK)
        st = stage(ctx, call, d, &dd, targets, n_targets, host_w, CL_TRUE, &buf);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LOSSES, 2 * dd.N * sizeof(float), &losses);
    if (st == CLG_OK)
        st = launch_forward(ctx, d, &dd, out, buf, host_w != NULL, losses);
    float *host = st == CLG_OK ? clg__malloc(2 * dd.N * sizeof *host) : NULL;
    if (st == CLG_OK && !host)
        st = clg__oom(ctx, call);
    if (st == CLG_OK) {
        cl_int err = clEnqueueReadBuffer(ctx->queue, losses, CL_TRUE, 0, 2 * dd.N * sizeof *host,
                                         host, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            st = clg__fail_cl(ctx, err, "%s: reading the losses", call);
        else
            reduce(host, dd.N, mean_loss, correct);
    }
    free(host);
    return st;
}

static clg_status backward_now(clg_ctx *ctx, const char *call, const clg__dense_loss *d,
                               const clg_tensor *out, const void *targets, size_t n_targets,
                               const float *host_w, float scale, clg_tensor *dout)
{
    dense_dims dd = {0, 0, 0, 0};
    cl_mem buf = NULL;
    clg_status st = dims_of(ctx, call, d, out, &dd);
    if (st == CLG_OK)
        st = check_grad(ctx, call, out, dout);
    if (st == CLG_OK)
        st = stage(ctx, call, d, &dd, targets, n_targets, host_w, CL_TRUE, &buf);
    return st == CLG_OK ? launch_backward(ctx, d, &dd, out, buf, host_w != NULL, scale, dout)
                        : st;
}

static clg__dense_loss regression_of(clg_regression_loss loss)
{
    return (clg__dense_loss){loss == CLG_REGRESSION_L1 ? CLG__DENSE_L1 : CLG__DENSE_MSE, NULL};
}

clg_status clg_regression_forward(clg_ctx *ctx, clg_regression_loss loss, const clg_tensor *y,
                                  const float *targets, size_t n_values, double *mean_loss)
{
    if ((unsigned)loss > CLG_REGRESSION_L1)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_regression_forward: unknown loss %d",
                         (int)loss);
    clg__dense_loss d = regression_of(loss);
    return forward_now(ctx, "clg_regression_forward", &d, y, targets, n_values, NULL,
                       mean_loss, NULL);
}

clg_status clg_regression_backward(clg_ctx *ctx, clg_regression_loss loss, const clg_tensor *y,
                                   const float *targets, size_t n_values, float scale,
                                   clg_tensor *dy)
{
    if ((unsigned)loss > CLG_REGRESSION_L1)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_regression_backward: unknown loss %d",
                         (int)loss);
    clg__dense_loss d = regression_of(loss);
    return backward_now(ctx, "clg_regression_backward", &d, y, targets, n_values, NULL, scale,
                        dy);
}

static size_t count_labelled(const int32_t *labels, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += labels[i] != CLG_LABEL_IGNORE;
    return k;
}

clg_status clg_pixel_xent_forward(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                  size_t n_labels, const float *weights, double *mean_loss,
                                  size_t *correct, size_t *labelled)
{
    clg__dense_loss d = {CLG__DENSE_PIXEL, NULL};
    clg_status st = forward_now(ctx, "clg_pixel_xent_forward", &d, logits, labels, n_labels,
                                weights, mean_loss, correct);
    if (st == CLG_OK && labelled)
        *labelled = count_labelled(labels, n_labels);
    return st;
}

clg_status clg_pixel_xent_backward(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                   size_t n_labels, const float *weights, float scale,
                                   clg_tensor *dlogits)
{
    clg__dense_loss d = {CLG__DENSE_PIXEL, NULL};
    return backward_now(ctx, "clg_pixel_xent_backward", &d, logits, labels, n_labels, weights,
                        scale, dlogits);
}

/* --- the net's output layers: forward queued, backward from the staged targets --- */

clg_status clg__dense_forward(clg_ctx *ctx, const clg__dense_loss *d, const clg_tensor *out,
                              const void *targets, double *mean_loss, size_t *correct)
{
    dense_dims dd = {0, 0, 0, 0};
    clg_status st = dims_of(ctx, "loss", d, out, &dd);
    return st == CLG_OK ? forward_now(ctx, "loss", d, out, targets, target_count(d, &dd), NULL,
                                      mean_loss, correct)
                        : st;
}

clg_status clg__dense_backward(clg_ctx *ctx, const clg__dense_loss *d, const clg_tensor *out,
                               const void *targets, float scale, clg_tensor *dout)
{
    dense_dims dd = {0, 0, 0, 0};
    clg_status st = dims_of(ctx, "loss", d, out, &dd);
    return st == CLG_OK ? backward_now(ctx, "loss", d, out, targets, target_count(d, &dd), NULL,
                                       scale, dout)
                        : st;
}

clg_status clg__dense_forward_begin(clg_ctx *ctx, const clg__dense_loss *d,
                                    const clg_tensor *out, const void *targets,
                                    clg__xent_pending *p)
{
    dense_dims dd = {0, 0, 0, 0};
    cl_mem buf = NULL, losses = NULL;
    clg__xent_pending_cancel(p); /* one left by a failed step */
    clg_status st = dims_of(ctx, "loss", d, out, &dd);
    if (st == CLG_OK)
        st = stage(ctx, "loss", d, &dd, targets, target_count(d, &dd), NULL, CL_FALSE, &buf);
    int staged = st == CLG_OK;
    if (st == CLG_OK && 2 * dd.N > p->dense_cap) { /* grows with the batch only */
        float *more = clg__realloc(p->dense, 2 * dd.N * sizeof *more);
        if (!more)
            st = clg__oom(ctx, "loss");
        else
            p->dense = more, p->dense_cap = 2 * dd.N;
    }
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LOSSES, 2 * dd.N * sizeof(float), &losses);
    if (st == CLG_OK)
        st = launch_forward(ctx, d, &dd, out, buf, 0, losses);
    if (st == CLG_OK) {
        cl_int err = clEnqueueReadBuffer(ctx->queue, losses, CL_FALSE, 0,
                                         2 * dd.N * sizeof(float), p->dense, 0, NULL, &p->done);
        if (err != CL_SUCCESS)
            st = clg__fail_cl(ctx, err, "loss: reading the losses");
    }
    if (st != CLG_OK && staged) /* the queued upload still reads the caller's targets */
        (void)clFinish(ctx->queue);
    p->n = dd.N;
    return st;
}

clg_status clg__dense_backward_staged(clg_ctx *ctx, const clg__dense_loss *d,
                                      const clg_tensor *out, float scale, clg_tensor *dout)
{
    dense_dims dd = {0, 0, 0, 0};
    cl_mem buf = NULL;
    clg_status st = dims_of(ctx, "loss", d, out, &dd);
    if (st == CLG_OK)
        st = check_grad(ctx, "loss", out, dout);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LABELS, target_count(d, &dd) * 4, &buf);
    return st == CLG_OK ? launch_backward(ctx, d, &dd, out, buf, 0, scale, dout) : st;
}

clg_status clg__dense_forward_end(clg_ctx *ctx, clg__xent_pending *p, double *mean_loss,
                                  size_t *correct)
{
    if (!p->done)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "loss: no loss pending");
    cl_int err = clWaitForEvents(1, &p->done);
    clReleaseEvent(p->done);
    p->done = NULL;
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "loss: reading the losses");
    reduce(p->dense, p->n, mean_loss, correct);
    return CLG_OK;
}
