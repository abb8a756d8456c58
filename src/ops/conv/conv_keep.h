/* What a network's convolution layer keeps from one pass for the next: Winograd's transform
 * of the input (V, every image of the batch) from the forward pass for the weight gradient,
 * so that it does not pad and transform the same input again (or, where the forward pass
 * fuses the transform into its products, the padded copy it read); and whether the context's
 * CLG__SCRATCH_CONV_DYQ holds dy's channels-last padded copy from the weight gradient, for
 * the data gradient right after it (the layer's backward order), so that dy is copied once
 * for both (one buffer for every layer: nothing runs between the two). Held by the layer,
 * filled by passes that run Winograd (one group). */
#ifndef CLGRAD_CONV_KEEP_H
#define CLGRAD_CONV_KEEP_H

#include "clgrad/conv.h"

typedef struct clg__conv_keep {
    clg_tensor *v; /* grown to the largest batch's V (or grid); NULL until needed */
    size_t n;      /* images whose V (or copy) it holds from the last forward pass; 0: none */
    int grid;      /* v holds the padded channels-last input instead (a forward pass that runs
                    * clg_wino_fused makes no V: the weight gradient transforms this copy) */
    size_t dyq_n;  /* images of dy in CLG__SCRATCH_CONV_DYQ from its last weight gradient */
} clg__conv_keep;

/* clg_conv2d_forward and clg_conv2d_backward_weights_bias with a keep (NULL: as those); the
 * forward pass with silu 1 (and d->relu 0) gives SiLU of its output (inference: its input is
 * not kept for a backward pass), with a residual (NULL: none; y's size, not y) the sum of
 * the two before the activation (d->relu): a residual block's sum written by its last
 * convolution. */
clg_status clg__conv2d_forward_keep(clg_ctx *ctx, const clg_conv2d_desc *d, int silu,
                                    const clg_tensor *x, const clg_tensor *w,
                                    const clg_tensor *bias, const clg_tensor *residual,
                                    clg_tensor *y, clg__conv_keep *keep);
clg_status clg__conv2d_backward_weights_keep(clg_ctx *ctx, const clg_conv2d_desc *d,
                                             const clg_tensor *x, const clg_tensor *dy,
                                             clg_tensor *dw, clg_tensor *db,
                                             clg__conv_keep *keep);
/* clg_conv2d_backward_data with a keep: after the weight gradient of the same dy. */
clg_status clg__conv2d_backward_data_keep(clg_ctx *ctx, const clg_conv2d_desc *d,
                                          const clg_tensor *dy, const clg_tensor *w,
                                          clg_tensor *dx, clg__conv_keep *keep);
void clg__conv_keep_free(clg__conv_keep *keep);

#endif
