/* Activation internals other ops call. */
#ifndef CLGRAD_ACTIVATION_INTERNAL_H
#define CLGRAD_ACTIVATION_INTERNAL_H

#include "clgrad/activation.h"

/* The activation a producer's forward epilogue applies after its bias (the kernels' act, or
 * epilogue bits >> 1: common.cl's clg_epi): a ReLU capped at a maximum (INFINITY: none), or
 * SiLU, which only inference fuses (training's backward pass needs SiLU's input). */
typedef enum clg__epi_act { CLG__EPI_NONE = 0, CLG__EPI_RELU = 1, CLG__EPI_SILU = 2 } clg__epi_act;

/* y += bias per channel, then max(y, 0) when relu: one pass over y on CPUs (whole planes as
 * vectors), the bias kernel and a ReLU pass elsewhere. Arguments already checked. */
clg_status clg__bias_add_relu(clg_ctx *ctx, const clg_tensor *bias, clg_tensor *y, int relu);

/* x = (x - ms[c]) / ms[C + c] per channel c of x's C, in place (input normalisation: ms holds
 * the C means, then the C standard deviations). */
clg_status clg__channel_normalise(clg_ctx *ctx, clg_tensor *x, const clg_tensor *ms);

#endif
