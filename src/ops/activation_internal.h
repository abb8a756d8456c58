/* Activation internals other ops call. */
#ifndef CLGRAD_ACTIVATION_INTERNAL_H
#define CLGRAD_ACTIVATION_INTERNAL_H

#include "clgrad/activation.h"

/* y += bias per channel, then max(y, 0) when relu: one pass over y on CPUs (whole planes as
 * vectors), the bias kernel and a ReLU pass elsewhere. Arguments already checked. */
clg_status clg__bias_add_relu(clg_ctx *ctx, const clg_tensor *bias, clg_tensor *y, int relu);

/* x = (x - ms[c]) / ms[C + c] per channel c of x's C, in place (input normalisation: ms holds
 * the C means, then the C standard deviations). */
clg_status clg__channel_normalise(clg_ctx *ctx, clg_tensor *x, const clg_tensor *ms);

#endif
