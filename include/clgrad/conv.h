/* 2-D convolution, NCHW float32: forward, backward-data, backward-weights, backward-bias, with
 * several exact algorithms and a per-device choice between them. */
#ifndef CLGRAD_CONV_H
#define CLGRAD_CONV_H

#include <stddef.h>
#include "clgrad/gemm.h"
#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_conv_algo {
    CLG_CONV_ALGO_AUTO = 0,     /* the stored `find` result if any, else a heuristic */
    CLG_CONV_ALGO_IM2COL = 1,   /* im2col into a bounded workspace, then GEMM */
    CLG_CONV_ALGO_IMPLICIT = 2, /* fused: register-blocked products reading the input in place */
    CLG_CONV_ALGO_WINOGRAD = 3, /* F(4x4, 3x3) and F(2x2, 5x5): stride 1, dilation 1 */
    CLG_CONV_ALGO_GEMM = 4,     /* 1x1, stride 1, no padding: the input is already the matrix */
    CLG_CONV_ALGO_FIND = 5,     /* time every valid algorithm on first use of a shape, store
                                   the winner per device in the cache folder, reuse it */
    CLG_CONV_ALGO_DEPTHWISE = 6 /* one filter per channel (groups = C = K): a tap per FMA,
                                   no workspace */
} clg_conv_algo;
#define CLG_CONV_ALGOS 6 /* IM2COL .. GEMM are 1 .. 4, DEPTHWISE 6; AUTO and FIND choose */

typedef enum clg_conv_pass {
    CLG_CONV_FWD = 0,
    CLG_CONV_BWD_DATA = 1,
    CLG_CONV_BWD_WEIGHTS = 2
} clg_conv_pass;

/* Geometry of a convolution; the kernel size comes from the weight tensor (K x C/groups x R x
 * S). Signed so that negative values are rejected rather than wrapped. */
typedef struct clg_conv2d_desc {
    int stride_h, stride_w;        /* >= 1 */
    int pad_top, pad_bottom, pad_left, pad_right; /* >= 0 */
    int dilation_h, dilation_w;    /* >= 1 */
    int groups;                    /* >= 1, divides C and K; groups = C = K is depthwise */
    clg_conv_algo algo;            /* for all three passes; CLGRAD_CONV_ALGO overrides AUTO */
    size_t workspace_limit;        /* bytes of scratch an algorithm may use; 0: 256 MiB */
    int relu;                      /* 1: the forward pass gives max(conv + bias, 0) (a ReLU
                                      fused into it: in the algorithm's epilogue where it has
                                      one, else run after) */
    float relu_max;                /* with relu, > 0: the output capped at it too (ReLU6: 6);
                                      0: no cap */
} clg_conv2d_desc;

/** Stride 1, no padding, dilation 1, one group, AUTO, default workspace limit, no ReLU. */
CLG_API clg_conv2d_desc clg_conv2d_desc_default(void);

/** Output shape N x K x P x Q for input x (N x C x H x W) and weights w (K x C/g x R x S).
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for a bad descriptor (negative padding, zero stride,
 *          groups not dividing C and K); CLG_ERR_SHAPE when w does not fit x or the kernel is
 *          larger than the padded input. The message names the field. */
CLG_API clg_status clg_conv2d_output_shape(const clg_conv2d_desc *d, clg_shape x, clg_shape w,
                                           clg_shape *y);

/** y = conv(x, w) + bias, then max(y, 0) when d->relu. bias: NULL or K elements (any shape
 *  with K elements). y must have the output shape. Queued on ctx. @return CLG_OK, CLG_ERR_INVALID_ARG, CLG_ERR_SHAPE, or
 *  a device error. */
CLG_API clg_status clg_conv2d_forward(clg_ctx *ctx, const clg_conv2d_desc *d, const clg_tensor *x,
                                      const clg_tensor *w, const clg_tensor *bias, clg_tensor *y);

/** dx = gradient of sum(dy * conv(x, w)) with respect to x (overwrites dx). */
CLG_API clg_status clg_conv2d_backward_data(clg_ctx *ctx, const clg_conv2d_desc *d,
                                            const clg_tensor *dy, const clg_tensor *w,
                                            clg_tensor *dx);

/** dw = gradient with respect to w, summed over the batch (overwrites dw). */
CLG_API clg_status clg_conv2d_backward_weights(clg_ctx *ctx, const clg_conv2d_desc *d,
                                               const clg_tensor *x, const clg_tensor *dy,
                                               clg_tensor *dw);

/** dw as clg_conv2d_backward_weights and db as clg_conv2d_backward_bias, in one call: the
 *  implicit algorithm sums db in the same pass over dy (one more row of its products); the
 *  others reduce dy after. db: K elements. */
CLG_API clg_status clg_conv2d_backward_weights_bias(clg_ctx *ctx, const clg_conv2d_desc *d,
                                                    const clg_tensor *x, const clg_tensor *dy,
                                                    clg_tensor *dw, clg_tensor *db);

/** db[k] = sum of dy over the batch and every pixel of channel k (overwrites db, K elements). */
CLG_API clg_status clg_conv2d_backward_bias(clg_ctx *ctx, const clg_tensor *dy, clg_tensor *db);

/** Whether an algorithm applies to a pass and shape, and the scratch bytes it needs at least
 *  (one image at a time) and would like (the whole batch at once).
 *  @return CLG_OK; CLG_ERR_UNSUPPORTED when it does not apply (message says why);
 *          CLG_ERR_INVALID_ARG / CLG_ERR_SHAPE for bad geometry. */
CLG_API clg_status clg_conv2d_workspace(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                                        clg_conv_algo algo, clg_shape x, clg_shape w,
                                        size_t *min_bytes, size_t *max_bytes);

/** The algorithm ctx would run now for this pass and shape (AUTO and FIND resolved; FIND may
 *  time the candidates first). */
CLG_API clg_status clg_conv2d_choose(clg_ctx *ctx, const clg_conv2d_desc *d, clg_conv_pass pass,
                                     clg_shape x, clg_shape w, clg_conv_algo *out);

/** "im2col", "implicit", "winograd", "gemm", "auto" or "find". */
CLG_API const char *clg_conv_algo_name(clg_conv_algo algo);

#ifdef __cplusplus
}
#endif
#endif
