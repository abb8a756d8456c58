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

#endif
