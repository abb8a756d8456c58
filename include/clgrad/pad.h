/* Spatial padding of NCHW float32 tensors (ONNX's Pad over H and W, PyTorch's F.pad). */
#ifndef CLGRAD_PAD_H
#define CLGRAD_PAD_H

#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_pad_mode {
    CLG_PAD_CONSTANT = 0, /* the value; negative pads remove rows and columns (a crop) */
    CLG_PAD_REFLECT = 1,  /* mirrored about the edge pixel, not repeating it (pads < the size) */
    CLG_PAD_EDGE = 2      /* the edge pixel repeated */
} clg_pad_mode;

typedef struct clg_pad2d_desc {
    clg_pad_mode mode;
    int top, bottom, left, right; /* rows and columns added (>= 0 but for CLG_PAD_CONSTANT) */
    float value;                  /* CLG_PAD_CONSTANT's */
} clg_pad2d_desc;

/** Constant 0, no padding. */
CLG_API clg_pad2d_desc clg_pad2d_desc_default(void);

/** N x C x (top + H + bottom) x (left + W + right) for input x. @return CLG_OK,
 *  CLG_ERR_INVALID_ARG (bad descriptor, naming the field), CLG_ERR_SHAPE (an output side
 *  below 1, or a reflection pad not below its side). */
CLG_API clg_status clg_pad2d_output_shape(const clg_pad2d_desc *d, clg_shape x, clg_shape *y);

/** y = pad(x); y must have the output shape. */
CLG_API clg_status clg_pad2d_forward(clg_ctx *ctx, const clg_pad2d_desc *d, const clg_tensor *x,
                                     clg_tensor *y);

/** dx = gradient of sum(dy * pad(x)) (overwrites dx): each input element gets the sum of the
 *  output elements that copy it. */
CLG_API clg_status clg_pad2d_backward(clg_ctx *ctx, const clg_pad2d_desc *d, const clg_tensor *dy,
                                      clg_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif
