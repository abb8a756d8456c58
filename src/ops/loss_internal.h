/* Training's loss without a pause between forward and backward: the labels are staged and the
 * per-sample losses read back without blocking, the backward pass reuses the staged labels,
 * and the mean is taken once the step is done. */
#ifndef CLG_LOSS_INTERNAL_H
#define CLG_LOSS_INTERNAL_H

#include "tensor/tensor_internal.h"

typedef struct clg__xent_pending {
    float *losses;  /* read-back targets, grown to the largest batch */
    cl_int *hits;
    size_t cap, n;
    float *dense;   /* dense losses: N losses then N correct-pixel counts */
    size_t dense_cap;
    cl_event done;  /* the last read; NULL when nothing is pending */
} clg__xent_pending;

/* Queues the labels' upload, the loss kernel and the read-back. labels must stay unchanged
 * until clg__xent_forward_end. */
clg_status clg__xent_forward_begin(clg_ctx *ctx, const clg_tensor *logits, const int32_t *labels,
                                   size_t n, clg__xent_pending *p);
/* The gradient of the mean loss * scale, from the labels clg__xent_forward_begin staged. */
clg_status clg__xent_backward_staged(clg_ctx *ctx, const clg_tensor *logits, float scale,
                                     clg_tensor *dlogits);
/* Waits for the read-back: mean loss (in sample order, in double) and correct count. */
clg_status clg__xent_forward_end(clg_ctx *ctx, clg__xent_pending *p, double *mean_loss,
                                 size_t *correct);
/* Waits for a read-back still queued (after a failure), reporting nothing. */
void clg__xent_pending_cancel(clg__xent_pending *p);
void clg__xent_pending_free(clg__xent_pending *p);

/* The losses over every output value (dense_loss.c) as the net's output layers use them:
 * regression against N x R floats, or per-pixel classes against N x H x W int32 labels with
 * the layer's class weights (a tensor of K on the device, or NULL for all 1). */
typedef enum clg__dense_kind { CLG__DENSE_MSE, CLG__DENSE_L1, CLG__DENSE_PIXEL } clg__dense_kind;
typedef struct clg__dense_loss {
    clg__dense_kind kind;
    const clg_tensor *weights;
} clg__dense_loss;

/* Blocking forward (mean loss, correct pixels) and backward with targets uploaded now. */
clg_status clg__dense_forward(clg_ctx *ctx, const clg__dense_loss *d, const clg_tensor *out,
                              const void *targets, double *mean_loss, size_t *correct);
clg_status clg__dense_backward(clg_ctx *ctx, const clg__dense_loss *d, const clg_tensor *out,
                               const void *targets, float scale, clg_tensor *dout);
/* The training step's: begin queues the upload, the loss and its read-back (targets unchanged
 * until end), backward_staged reuses the staged targets, end waits for the figures. */
clg_status clg__dense_forward_begin(clg_ctx *ctx, const clg__dense_loss *d,
                                    const clg_tensor *out, const void *targets,
                                    clg__xent_pending *p);
clg_status clg__dense_backward_staged(clg_ctx *ctx, const clg__dense_loss *d,
                                      const clg_tensor *out, float scale, clg_tensor *dout);
clg_status clg__dense_forward_end(clg_ctx *ctx, clg__xent_pending *p, double *mean_loss,
                                  size_t *correct);

#endif
