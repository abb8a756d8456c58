/* ONNX import and export: networks trained elsewhere run and fine-tune here, networks trained
 * here run anywhere (MATLAB's importNetworkFromONNX / exportONNXNetwork). */
#ifndef CLGRAD_ONNX_H
#define CLGRAD_ONNX_H

#include "clgrad/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Builds *out from an ONNX model file (opsets 6 to 17): one 4-D float input (N x C x H x W)
 *  and a graph of Conv (pads, strides, dilations, groups, auto_pad), MaxPool, AveragePool
 *  (pads, ceil_mode, count_include_pad), GlobalAveragePool, Gemm, MatMul (with a following
 *  Add of a bias: fully connected), BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh,
 *  Add, Concat (channels), Flatten, Reshape as a flatten, Dropout, Identity and a final
 *  Softmax, its weights from initializers, kept bit for bit. A model that ends before a
 *  Softmax gets one (clgrad's output layer): clg_net_activations of the layer before it gives
 *  the model's own output. Layers take the names of the ONNX tensors they compute where those
 *  are valid layer names. Class names come back from a model clgrad exported.
 *  @return CLG_OK; CLG_ERR_IO (unreadable file); CLG_ERR_CORRUPT (not an ONNX model, tensor
 *          data that does not match its shape, external data); CLG_ERR_UNSUPPORTED naming the
 *          node, its operator and what clgrad lacks (nothing is half-built). */
CLG_API clg_status clg_net_import_onnx(clg_ctx *ctx, const char *path, clg_net **out);

/** Writes net as an ONNX model (opset 13) with its weights: the input "input" shaped
 *  N x C x H x W (N free), the output "probabilities", class names in the metadata
 *  ("clgrad.classes", one per line). Written to a temporary name, then renamed.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG; CLG_ERR_IO. */
CLG_API clg_status clg_net_export_onnx(clg_net *net, const char *path);

#ifdef __cplusplus
}
#endif

#endif
