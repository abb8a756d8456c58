/* What a network's convolution layer keeps from its forward pass for its weight gradient:
 * Winograd's transform of the input (V, every image of the batch), so that the weight
 * gradient does not pad and transform the same input again. Held by the layer, filled by a
 * training forward pass that runs Winograd (one group), read by the backward pass after it. */
#ifndef CLGRAD_CONV_KEEP_H
#define CLGRAD_CONV_KEEP_H

#include "clgrad/conv.h"

typedef struct clg__conv_keep {
    clg_tensor *v; /* grown to the largest batch's V; NULL until needed */
    size_t n;      /* images whose V it holds from the last forward pass; 0: none */
} clg__conv_keep;

/* clg_conv2d_forward and clg_conv2d_backward_weights_bias with a keep (NULL: as those). */
clg_status clg__conv2d_forward_keep(clg_ctx *ctx, const clg_conv2d_desc *d, const clg_tensor *x,
                                    const clg_tensor *w, const clg_tensor *bias, clg_tensor *y,
                                    clg__conv_keep *keep);
clg_status clg__conv2d_backward_weights_keep(clg_ctx *ctx, const clg_conv2d_desc *d,
                                             const clg_tensor *x, const clg_tensor *dy,
                                             clg_tensor *dw, clg_tensor *db,
                                             clg__conv_keep *keep);
void clg__conv_keep_free(clg__conv_keep *keep);

#endif
