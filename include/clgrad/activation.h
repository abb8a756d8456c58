/* Elementwise activations (ReLU and its relatives, sigmoid, tanh, and the clipped and hard
 * forms mobile networks use). */
#ifndef CLGRAD_ACTIVATION_H
#define CLGRAD_ACTIVATION_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_activation {
    CLG_ACT_RELU = 0,
    CLG_ACT_LEAKY_RELU = 1, /* x > 0 ? x : alpha * x */
    CLG_ACT_ELU = 2,        /* x > 0 ? x : alpha * (exp(x) - 1) */
    CLG_ACT_SIGMOID = 3,
    CLG_ACT_TANH = 4,
    CLG_ACT_CLIP = 5,         /* min(max(x, alpha), beta): ReLU6 is alpha 0, beta 6 */
    CLG_ACT_HARD_SIGMOID = 6, /* max(0, min(1, alpha * x + beta)) */
    CLG_ACT_HARD_SWISH = 7,   /* x * max(0, min(1, x / 6 + 1 / 2)) (MobileNet-v3) */
    CLG_ACT_SILU = 8          /* x * sigmoid(x), also called swish */
} clg_activation;

/** An activation and its settings: alpha as in the list above, beta for clip and hard sigmoid
 *  (unused by the others). */
typedef struct clg_activation_desc {
    clg_activation f;
    float alpha, beta;
} clg_activation_desc;

/** y = f(x) elementwise; x and y have equal element counts and may be the same tensor. */
CLG_API clg_status clg_activation_forward_desc(clg_ctx *ctx, const clg_activation_desc *a,
                                               const clg_tensor *x, clg_tensor *y);

/** dx = dy * f'(x); x is the forward input and y its output. dx may be dy. At a kink (clip's
 *  and the hard forms' ends) the derivative is taken from the flat side, 0. */
CLG_API clg_status clg_activation_backward_desc(clg_ctx *ctx, const clg_activation_desc *a,
                                                const clg_tensor *x, const clg_tensor *y,
                                                const clg_tensor *dy, clg_tensor *dx);

/** The one-setting form of the two above, for every activation but clip and hard sigmoid
 *  (which take two: CLG_ERR_INVALID_ARG). alpha is used by leaky ReLU and ELU only. */
CLG_API clg_status clg_activation_forward(clg_ctx *ctx, clg_activation f, float alpha,
                                          const clg_tensor *x, clg_tensor *y);

/** dx = dy * f'(x); x is the forward input and y its output (sigmoid and tanh use y, the
 *  others x). dx may be dy. */
CLG_API clg_status clg_activation_backward(clg_ctx *ctx, clg_activation f, float alpha,
                                           const clg_tensor *x, const clg_tensor *y,
                                           const clg_tensor *dy, clg_tensor *dx);

/** y = a * b elementwise, b of a's shape or (a gate, as squeeze-and-excitation blocks have)
 *  one value per sample and channel, N x C x 1 x 1, spread over a's H x W. y may be a. */
CLG_API clg_status clg_mul_forward(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                                   clg_tensor *y);

/** da = dy * b and db = dy * a (a gate's summed over its H x W, in a fixed order); either may
 *  be NULL when not wanted. */
CLG_API clg_status clg_mul_backward(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                                    const clg_tensor *dy, clg_tensor *da, clg_tensor *db);

#ifdef __cplusplus
}
#endif
#endif
