/* Softmax cross-entropy: labels checked on the host and staged through a pooled buffer; the
 * mean loss and accuracy are reduced on the host in double, in sample order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/loss_internal.h"
#include "clgrad/loss.h"


/* Checks the arguments and uploads the labels into a scratch buffer (its first N ints; the
 * next N hold the per-sample hit flags). */
static clg_status stage_labels(clg_ctx *ctx, const char *call, const clg_tensor *z,
                               const int32_t *labels, size_t n, size_t *N, size_t *C, cl_mem *buf,
                               cl_bool blocking)
{
    if (!ctx || !z || !labels)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: NULL argument", call);
    if (z->ctx != ctx)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: logits live on another context", call);
    *N = z->shape.n;
    *C = clg_tensor_numel(z) / *N;
    if (n != *N)
        return clg__fail(ctx, CLG_ERR_SHAPE, "%s: %zu labels for %zu samples", call, n, *N);
    for (size_t i = 0; i < n; i++)
        if (labels[i] < 0 || (size_t)labels[i] >= *C)
            return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: label %d of sample %zu is outside 0..%zu",
                             call, (int)labels[i], i, *C - 1);
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LABELS, 2 * n * sizeof(cl_int), buf);
    if (st != CLG_OK)
        return st;
    cl_int err = clEnqueueWriteBuffer(ctx->queue, *buf, blocking, 0, n * sizeof(cl_int), labels, 0,
                                      NULL, NULL);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "%s: uploading labels", call);
    return CLG_OK;
}

/* GPUs: a work-group of XENT_GROUP per sample (the _group kernels of softmax.cl); CPUs: a
 * work-item per sample, its loops over the row vectorised. */
enum { XENT_GROUP = 64 };

/* Begins kernel `cpu` (`gpu`, its work-group form, on GPUs) with its leading arguments:
 * logits, labels, N, C. Both names are literals: the launch keeps the pointer (profiles and
 * error messages read it after this returns). */
static clg_status begin_xent(clg_ctx *ctx, const char *cpu, const char *gpu,
                             const clg_tensor *logits, cl_mem labels, size_t N, size_t C,
                             clg__launch *l)
{
    const char *kernel = clg_ctx_decides_as_gpu(ctx) ? gpu : cpu;
    clg_status st = clg__launch_begin(ctx, "softmax", NULL, kernel, l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(l, logits);
    clg__arg_mem(l, labels);
    clg__arg_u32(l, N);
    clg__arg_u32(l, C);
    return CLG_OK;
}

static clg_status run_xent(clg_ctx *ctx, clg__launch *l, size_t N)
{
    size_t group = clg_ctx_decides_as_gpu(ctx) ? XENT_GROUP : 1;
    size_t global[3] = {N * group, 1, 1}, local[3] = {group, 1, 1};
    return clg__launch_run(l, global, local);
}

static clg_status launch_forward(clg_ctx *ctx, const clg_tensor *logits, cl_mem labels, size_t N,
                                 size_t C, cl_mem out, size_t out_off)
{
    clg__launch l;
    clg_status st = begin_xent(ctx, "clg_xent_fwd", "clg_xent_fwd_group", logits, labels, N, C, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, out);
    clg__arg_u64(&l, out_off);
    return run_xent(ctx, &l, N);
}

static clg_status launch_backward(clg_ctx *ctx, const clg_tensor *logits, cl_mem labels, size_t N,
                                  size_t C, float scale, clg_tensor *dlogits)
{
    clg__launch l;
    clg_status st = begin_xent(ctx, "clg_xent_bwd", "clg_xent_bwd_group", logits, labels, N, C, &l);
    if (st != CLG_OK)
        return st;
    clg__arg_f32(&l, scale);
    clg__arg_tensor(&l, dlogits);
    return run_xent(ctx, &l, N);
}

/* The mean of N losses in sample order, in double, and the count of hits. */
static void reduce(const float *losses, const cl_int *hits, size_t N, double *mean_loss, size_t *correct)
{
    double sum = 0;
    size_t ok = 0;
    for (size_t i = 0; i < N; i++) {
        sum += losses[i];
        ok += (size_t)(hits[i] != 0);
    }
    if (mean_loss)
        *mean_loss = sum / (double)N;
    if (correct)
        *correct = ok;
}

clg_status clg_softmax_xent_forward(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                    size_t n_labels, clg_tensor *losses, double *mean_loss,
                                    size_t *correct)
{
    size_t N = 0, C = 0;
    cl_mem buf = NULL;
    clg_status st = stage_labels(ctx, "clg_softmax_xent_forward", logits, labels, n_labels, &N, &C, &buf, CL_TRUE);
    if (st != CLG_OK)
        return st;
    if (losses && (losses->ctx != ctx || clg_tensor_numel(losses) != N))
        return clg__fail(ctx, CLG_ERR_SHAPE, "clg_softmax_xent_forward: losses must hold %zu values", N);
    /* Per-sample losses go to the caller's tensor or, if none, to a pooled buffer. */
    cl_mem out = losses ? losses->mem : NULL;
    size_t out_off = losses ? losses->offset : 0;
    if (!losses && (st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LOSSES, N * sizeof(float), &out)) != CLG_OK)
        return st;
    st = launch_forward(ctx, logits, buf, N, C, out, out_off);
    if (st == CLG_OK && (mean_loss || correct)) {
        float *host = clg__malloc(N * sizeof *host);
        cl_int *hit = clg__malloc(2 * N * sizeof *hit);
        cl_int err = host && hit ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, out_off * sizeof(float),
                                      N * sizeof(float), host, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, 2 * N * sizeof(cl_int), hit, 0,
                                      NULL, NULL);
        if (err != CL_SUCCESS) {
            st = clg__fail_cl(ctx, err, "clg_softmax_xent_forward: reading the losses");
        } else {
            reduce(host, hit + N, N, mean_loss, correct);
        }
        free(host);
        free(hit);
    }
    return st;
}

clg_status clg_softmax_xent_backward(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                     size_t n_labels, float scale, clg_tensor *dlogits)
{
    size_t N = 0, C = 0;
    cl_mem buf = NULL;
    clg_status st = stage_labels(ctx, "clg_softmax_xent_backward", logits, labels, n_labels, &N, &C, &buf, CL_TRUE);
    if (st != CLG_OK)
        return st;
    if (!dlogits || dlogits->ctx != ctx || clg_tensor_numel(dlogits) != N * C)
        return clg__fail(ctx, dlogits ? CLG_ERR_SHAPE : CLG_ERR_INVALID_ARG,
                         "clg_softmax_xent_backward: dlogits must hold %zu x %zu values", N, C);
    return launch_backward(ctx, logits, buf, N, C, scale, dlogits);
}

/* Waits for a pending read-back and lets its event go (CL_SUCCESS when none is pending). */
static cl_int wait_release(clg__xent_pending *p)
{
    if (!p->done)
        return CL_SUCCESS;
    cl_int err = clWaitForEvents(1, &p->done);
    clReleaseEvent(p->done);
    p->done = NULL;
    return err;
}

static clg_status wait_pending(clg_ctx *ctx, clg__xent_pending *p)
{
    cl_int err = wait_release(p);
    return err == CL_SUCCESS ? CLG_OK : clg__fail_cl(ctx, err, "reading the losses");
}

clg_status clg__xent_forward_begin(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                   size_t n, clg__xent_pending *p)
{
    size_t N = 0, C = 0;
    cl_mem buf = NULL, out = NULL;
    clg_status st = wait_pending(ctx, p); /* one left by a failed step */
    if (st == CLG_OK)
        st = stage_labels(ctx, "clg_softmax_xent_forward", logits, labels, n, &N, &C, &buf,
                          CL_FALSE);
    int staged = st == CLG_OK;
    if (st == CLG_OK && N > p->cap) { /* grows with the batch only */
        float *losses = clg__realloc(p->losses, N * sizeof *losses);
        p->losses = losses ? losses : p->losses;
        cl_int *hits = losses ? clg__realloc(p->hits, N * sizeof *hits) : NULL;
        p->hits = hits ? hits : p->hits;
        if (!losses || !hits)
            st = clg__oom(ctx, "clg_softmax_xent_forward");
        else
            p->cap = N;
    }
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LOSSES, N * sizeof(float), &out);
    if (st == CLG_OK)
        st = launch_forward(ctx, logits, buf, N, C, out, 0);
    cl_int err = CL_SUCCESS;
    if (st == CLG_OK)
        err = clEnqueueReadBuffer(ctx->queue, out, CL_FALSE, 0, N * sizeof(float), p->losses, 0,
                                  NULL, NULL);
    if (st == CLG_OK && err == CL_SUCCESS)
        err = clEnqueueReadBuffer(ctx->queue, buf, CL_FALSE, N * sizeof(cl_int), N * sizeof(cl_int),
                                  p->hits, 0, NULL, &p->done);
    if (st == CLG_OK && err != CL_SUCCESS)
        st = clg__fail_cl(ctx, err, "clg_softmax_xent_forward: reading the losses");
    /* A failure after the labels' queued upload: it still reads the caller's labels, which the
     * caller may free at once, and a queued read may write p's arrays, with no event to wait on
     * later. The queue's error, if any, is not this call's. */
    if (st != CLG_OK && staged)
        (void)clFinish(ctx->queue);
    p->n = N;
    return st;
}

clg_status clg__xent_backward_staged(clg_ctx *ctx, const clg_tensor *logits, float scale,
                                     clg_tensor *dlogits)
{
    size_t N = logits->shape.n, C = clg_tensor_numel(logits) / N;
    cl_mem buf = NULL;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_XENT_LABELS, 2 * N * sizeof(cl_int), &buf);
    if (st == CLG_OK && (dlogits->ctx != ctx || clg_tensor_numel(dlogits) != N * C))
        st = clg__fail(ctx, CLG_ERR_SHAPE, "clg_softmax_xent_backward: dlogits must hold %zu x %zu values", N, C);
    return st == CLG_OK ? launch_backward(ctx, logits, buf, N, C, scale, dlogits) : st;
}

clg_status clg__xent_forward_end(clg_ctx *ctx, clg__xent_pending *p, double *mean_loss,
                                 size_t *correct)
{
    int pending = p->done != NULL;
    clg_status st = wait_pending(ctx, p);
    if (st == CLG_OK && !pending)
        st = clg__fail(ctx, CLG_ERR_INTERNAL, "clg_softmax_xent_forward: no loss pending");
    if (st == CLG_OK)
        reduce(p->losses, p->hits, p->n, mean_loss, correct);
    return st;
}

void clg__xent_pending_cancel(clg__xent_pending *p)
{
    (void)wait_release(p);
}

void clg__xent_pending_free(clg__xent_pending *p)
{
    clg__xent_pending_cancel(p);
    free(p->losses);
    free(p->hits);
    free(p->dense);
    memset(p, 0, sizeof *p);
}
