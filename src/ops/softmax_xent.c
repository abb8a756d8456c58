/* Softmax cross-entropy: labels checked on the host and staged through a pooled buffer; the
 * mean loss and accuracy are reduced on the host in double, in sample order. */
#include <stdlib.h>
#include "tensor/tensor_internal.h"
#include "clgrad/loss.h"

enum { SLOT_LABELS = 3, SLOT_LOSSES = 4 };

/* Checks the arguments and uploads the labels into a scratch buffer (its first N ints; the
 * next N hold the per-sample hit flags). */
static clg_status stage_labels(clg_ctx *ctx, const char *call, const clg_tensor *z,
                               const int32_t *labels, size_t n, size_t *N, size_t *C, cl_mem *buf)
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
    clg_status st = clg__scratch_get(ctx, SLOT_LABELS, 2 * n * sizeof(cl_int), buf);
    if (st != CLG_OK)
        return st;
    cl_int err = clEnqueueWriteBuffer(ctx->queue, *buf, CL_TRUE, 0, n * sizeof(cl_int), labels, 0,
                                      NULL, NULL);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "%s: uploading labels", call);
    return CLG_OK;
}

clg_status clg_softmax_xent_forward(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                    size_t n_labels, clg_tensor *losses, double *mean_loss,
                                    size_t *correct)
{
    size_t N = 0, C = 0;
    cl_mem buf = NULL;
    clg_status st = stage_labels(ctx, "clg_softmax_xent_forward", logits, labels, n_labels, &N, &C, &buf);
    if (st != CLG_OK)
        return st;
    if (losses && (losses->ctx != ctx || clg_tensor_numel(losses) != N))
        return clg__fail(ctx, CLG_ERR_SHAPE, "clg_softmax_xent_forward: losses must hold %zu values", N);
    /* Per-sample losses go to the caller's tensor or, if none, to a pooled buffer. */
    cl_mem out = losses ? losses->mem : NULL;
    size_t out_off = losses ? losses->offset : 0;
    if (!losses && (st = clg__scratch_get(ctx, SLOT_LOSSES, N * sizeof(float), &out)) != CLG_OK)
        return st;
    clg__launch l;
    st = clg__launch_begin(ctx, "softmax", NULL, "clg_xent_fwd", &l);
    if (st == CLG_OK) {
        clg__arg_tensor(&l, logits);
        clg__arg_mem(&l, buf);
        clg__arg_u32(&l, N);
        clg__arg_u32(&l, C);
        clg__arg_mem(&l, out);
        clg__arg_u64(&l, out_off);
        size_t global[3] = {N, 1, 1}, local[3] = {1, 1, 1};
        st = clg__launch_run(&l, global, local);
    }
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
            double sum = 0;
            size_t ok = 0;
            for (size_t i = 0; i < N; i++) {
                sum += host[i];
                ok += (size_t)(hit[N + i] != 0);
            }
            if (mean_loss)
                *mean_loss = sum / (double)N;
            if (correct)
                *correct = ok;
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
    clg_status st = stage_labels(ctx, "clg_softmax_xent_backward", logits, labels, n_labels, &N, &C, &buf);
    if (st != CLG_OK)
        return st;
    if (!dlogits || dlogits->ctx != ctx || clg_tensor_numel(dlogits) != N * C)
        return clg__fail(ctx, dlogits ? CLG_ERR_SHAPE : CLG_ERR_INVALID_ARG,
                         "clg_softmax_xent_backward: dlogits must hold %zu x %zu values", N, C);
    clg__launch l;
    st = clg__launch_begin(ctx, "softmax", NULL, "clg_xent_bwd", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, logits);
    clg__arg_mem(&l, buf);
    clg__arg_u32(&l, N);
    clg__arg_u32(&l, C);
    clg__arg_f32(&l, scale);
    clg__arg_tensor(&l, dlogits);
    size_t global[3] = {N, 1, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}
