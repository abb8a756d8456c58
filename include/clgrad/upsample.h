/* Up-sampling of NCHW float32 tensors by whole factors (ONNX's Resize, PyTorch's
 * F.interpolate with a scale factor). */
#ifndef CLGRAD_UPSAMPLE_H
#define CLGRAD_UPSAMPLE_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_upsample_mode {
    CLG_UPSAMPLE_NEAREST = 0,  /* each value repeated sh x sw times */
    CLG_UPSAMPLE_BILINEAR = 1  /* half-pixel centres, edges clamped (PyTorch's
                                  align_corners=False, ONNX's half_pixel) */
} clg_upsample_mode;

/** y (N x C x H sh x W sw) = x up-sampled; sh, sw >= 1. @return CLG_OK, CLG_ERR_INVALID_ARG
 *  (a mode or factor out of range), CLG_ERR_SHAPE (y of another shape). */
CLG_API clg_status clg_upsample_forward(clg_ctx *ctx, clg_upsample_mode mode, int sh, int sw,
                                        const clg_tensor *x, clg_tensor *y);

/** dx = gradient of sum(dy * upsample(x)) (overwrites dx): each input value gets the outputs
 *  that read it, weighted as they read it. */
CLG_API clg_status clg_upsample_backward(clg_ctx *ctx, clg_upsample_mode mode, int sh, int sw,
                                         const clg_tensor *dy, clg_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif
