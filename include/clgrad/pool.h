/* 2-D pooling, NCHW float32: max, average (padding counted or not), global average. */
#ifndef CLGRAD_POOL_H
#define CLGRAD_POOL_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_pool_mode {
    CLG_POOL_MAX = 0,
    CLG_POOL_AVG = 1,          /* divisor: window positions inside the padded input */
    CLG_POOL_AVG_EXCLUDE = 2   /* divisor: window positions inside the input itself */
} clg_pool_mode;

typedef struct clg_pool2d_desc {
    clg_pool_mode mode;
    int window_h, window_w;                        /* >= 1 */
    int stride_h, stride_w;                        /* >= 1 */
    int pad_top, pad_bottom, pad_left, pad_right;  /* 0 <= pad < window */
    int ceil_mode;                                 /* 1: output size rounded up (a last,
                                                      partial window that starts inside the
                                                      input or its left/top padding) */
    int relu_input;                                /* 1: x is a ReLU's output, and backward
                                                      gives the gradient with respect to the
                                                      ReLU's input (zero where x <= 0): the
                                                      ReLU's backward pass folded in */
} clg_pool2d_desc;

/** 2x2 max pooling, stride 2, no padding, floor mode, relu_input 0. */
CLG_API clg_pool2d_desc clg_pool2d_desc_default(void);

/** N x C x P x Q for input x. @return CLG_OK, CLG_ERR_INVALID_ARG (bad descriptor, naming the
 *  field), CLG_ERR_SHAPE (window larger than the padded input). */
CLG_API clg_status clg_pool2d_output_shape(const clg_pool2d_desc *d, clg_shape x, clg_shape *y);

/** y = pool(x); y must have the output shape. */
CLG_API clg_status clg_pool2d_forward(clg_ctx *ctx, const clg_pool2d_desc *d, const clg_tensor *x,
                                      clg_tensor *y);

/** dx = gradient of sum(dy * pool(x)) (overwrites dx). Max pooling routes each window's
 *  gradient to its largest element, the first in row-major order on ties; x is the forward
 *  input. */
CLG_API clg_status clg_pool2d_backward(clg_ctx *ctx, const clg_pool2d_desc *d, const clg_tensor *x,
                                       const clg_tensor *dy, clg_tensor *dx);

/** y (N x C x 1 x 1) = mean of each channel's H x W values. */
CLG_API clg_status clg_global_avg_pool_forward(clg_ctx *ctx, const clg_tensor *x, clg_tensor *y);

/** dx[n][c][h][w] = dy[n][c] / (H*W). */
CLG_API clg_status clg_global_avg_pool_backward(clg_ctx *ctx, const clg_tensor *dy, clg_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif
