/* Networks: layers in order, each reading the previous layer's output or any earlier named
 * layer's (a layer graph: skip connections, branches that add or concatenate), shapes inferred
 * from the input, a text form, initialisation, prediction, and model files. A network lives on
 * one context (device). */
#ifndef CLGRAD_NN_H
#define CLGRAD_NN_H

#include <stddef.h>
#include <stdint.h>
#include "clgrad/activation.h"
#include "clgrad/conv.h"
#include "clgrad/data.h"
#include "clgrad/loss.h"
#include "clgrad/pad.h"
#include "clgrad/pool.h"
#include "clgrad/upsample.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_net clg_net;

typedef enum clg_layer_kind {
    CLG_LAYER_CONV2D = 0,
    CLG_LAYER_POOL2D = 1,          /* max or average */
    CLG_LAYER_GLOBAL_AVG_POOL = 2,
    CLG_LAYER_FC = 3,              /* fully connected, with bias */
    CLG_LAYER_BATCHNORM = 4,
    CLG_LAYER_DROPOUT = 5,
    CLG_LAYER_ACTIVATION = 6,
    CLG_LAYER_SOFTMAX_XENT = 7,    /* output: softmax with cross-entropy loss; always last */
    CLG_LAYER_ADD = 8,             /* elementwise sum of same-shaped inputs, optionally ReLU */
    CLG_LAYER_CONCAT = 9,          /* inputs stacked along the channels */
    CLG_LAYER_MUL = 10,            /* elementwise product of two inputs (or by a C x 1 x 1 gate) */
    CLG_LAYER_SLICE = 11,          /* a range of its input's channels */
    CLG_LAYER_SHUFFLE = 12,        /* channels shuffled across groups (ShuffleNet) */
    CLG_LAYER_PAD = 13,            /* spatial padding: constant, reflect or edge (pad.h) */
    CLG_LAYER_CONV_TRANSPOSE = 14, /* transposed convolution: images made larger */
    CLG_LAYER_UPSAMPLE = 15,       /* up-sampling by whole factors, nearest or bilinear */
    CLG_LAYER_CROP = 16,           /* the centre of its input at another layer's size */
    CLG_LAYER_REGRESSION = 17,     /* output: regression loss (MSE or L1) over every value */
    CLG_LAYER_PIXEL_SOFTMAX = 18   /* output: softmax over the channels at each pixel, with
                                      cross-entropy against a label map (segmentation) */
} clg_layer_kind;

#define CLG_LAYER_NAME 32     /* bytes of a layer name, with its NUL */
#define CLG_LAYER_INPUTS 16   /* most inputs of one layer */

typedef struct clg_layer_info {
    clg_layer_kind kind;
    char text[200];      /* the layer's line in the text format */
    char name[CLG_LAYER_NAME]; /* given, or "l<number>" (1-based) */
    size_t inputs;       /* how many layers it reads */
    size_t input[CLG_LAYER_INPUTS]; /* their indices; CLG_NET_INPUT for the network's input */
    clg_shape output;    /* per sample (n = 1) */
    size_t params;       /* learnable values */
    double flops;        /* floating-point operations of the forward pass per sample */
} clg_layer_info;

#define CLG_NET_INPUT ((size_t)-1) /* clg_layer_info.input[]: the network's input */

/* What clg_net_get_params / clg_net_set_params move, in layer order. */
typedef enum clg_param_set {
    CLG_PARAMS_LEARNABLE = 0,  /* weights then bias; batch norm scale then shift */
    CLG_PARAMS_STATE = 1       /* batch norm running mean then running variance */
} clg_param_set;

/** An empty network on ctx (borrowed; must outlive the network) for samples of shape input
 *  (c x h x w; n is ignored). @return CLG_OK, CLG_ERR_INVALID_ARG (NULL, a zero size). */
CLG_API clg_status clg_net_create(clg_ctx *ctx, clg_shape input, clg_net **out);
/** NULL is a no-op. */
CLG_API void clg_net_destroy(clg_net *net);

/* Adding layers. Each infers its output shape from the previous layer; a shape that cannot
 * work is CLG_ERR_SHAPE with a message naming the layer (number and text). Nothing can be
 * added after the softmax output. Parameters start at zero until clg_net_init. */

/** Convolution with `filters` kernels of kernel_h x kernel_w; d NULL is the default geometry
 *  (stride 1, no padding); bias 1 adds a learnable bias per filter. */
CLG_API clg_status clg_net_add_conv2d(clg_net *net, size_t kernel_h, size_t kernel_w,
                                      size_t filters, const clg_conv2d_desc *d, int bias);
CLG_API clg_status clg_net_add_pool2d(clg_net *net, const clg_pool2d_desc *d);
CLG_API clg_status clg_net_add_global_avg_pool(clg_net *net);
/** Fully connected with `outputs` units and a bias; flattens whatever comes in. */
CLG_API clg_status clg_net_add_fc(clg_net *net, size_t outputs);
/** Batch normalisation per channel; momentum in (0, 1] (PyTorch's: 0.1), eps > 0. */
CLG_API clg_status clg_net_add_batchnorm(clg_net *net, float momentum, float eps);
/** Dropout of probability p in [0, 1), active in training only. */
CLG_API clg_status clg_net_add_dropout(clg_net *net, float p);
/** An activation of one setting (alpha: leaky ReLU's and ELU's); clip and hard sigmoid take
 *  two, through the _desc form. */
CLG_API clg_status clg_net_add_activation(clg_net *net, clg_activation f, float alpha);
CLG_API clg_status clg_net_add_activation_desc(clg_net *net, const clg_activation_desc *a);
/** The output layer: its input size is the class count. Every other layer must by then feed a
 *  later one. */
CLG_API clg_status clg_net_add_softmax_xent(clg_net *net);
/** The output of a regression network: its input is the prediction (any shape: an image for
 *  image-to-image regression), trained against float targets of that shape with loss
 *  (loss.h: half mean squared error or mean absolute error per sample). */
CLG_API clg_status clg_net_add_regression(clg_net *net, clg_regression_loss loss);
/** The output of a segmentation network: its input's channels are the classes (at least 2)
 *  at each pixel, trained against a label map of the input's H x W (loss.h's per-pixel
 *  softmax cross-entropy); weights: NULL or one per class (at most CLG_CLASS_WEIGHTS_MAX,
 *  e.g. from clg_datastore_class_weights). */
CLG_API clg_status clg_net_add_pixel_softmax(clg_net *net, const float *weights, size_t count);
/** Replaces the class weights of a net's pixelsoftmax output (count 0: all 1); they are part
 *  of its text form, so replicas and model files keep them. */
CLG_API clg_status clg_net_set_class_weights(clg_net *net, const float *weights, size_t count);

/* What a network's output layer trains it for. */
typedef enum clg_task {
    CLG_TASK_NONE = 0,           /* no output layer yet */
    CLG_TASK_CLASSIFICATION = 1, /* softmax: a class per sample */
    CLG_TASK_SEGMENTATION = 2,   /* pixelsoftmax: a class per pixel */
    CLG_TASK_REGRESSION = 3      /* regression: values (an image, a vector) per sample */
} clg_task;


/** The net's task, from its output layer. */
CLG_API clg_task clg_net_task(const clg_net *net);
/** Values per sample of clg_net_predict's output (the output layer's input size). */
CLG_API size_t clg_net_output_count(const clg_net *net);
/** Shape per sample of that output (n = 1). */
CLG_API clg_shape clg_net_output_shape(const clg_net *net);

/* Layer graphs. A layer reads the previous layer's output unless told otherwise; layers are
 * named "l1", "l2", ... in order unless named. */

/** Names the last layer added (1 to 31 letters, digits, '_', '-', '.', starting with a letter
 *  or '_'; not "input" nor "l<number>"; unique). */
CLG_API clg_status clg_net_name_layer(clg_net *net, const char *name);
/** The next layer added reads the output of the layer named `name` ("input": the network's
 *  input) instead of the previous layer's. */
CLG_API clg_status clg_net_take_from(clg_net *net, const char *name);
/** Elementwise sum of the default input (the previous layer's, or clg_net_take_from's) and the
 *  n named layers' outputs, all of one shape; relu 1 applies a ReLU to the sum. */
CLG_API clg_status clg_net_add_add(clg_net *net, const char *const *names, size_t n, int relu);
/** The default input and the n named layers' outputs stacked along the channels, in that
 *  order (equal height and width). */
CLG_API clg_status clg_net_add_concat(clg_net *net, const char *const *names, size_t n);
/** The default input times the one named layer's output, elementwise: of one shape, or either
 *  of them C x 1 x 1 (a gate, spread over the other's H x W: squeeze-and-excitation). */
CLG_API clg_status clg_net_add_mul(clg_net *net, const char *const *names, size_t n);
/** Channels [first, first + count) of the default input (ShuffleNet's split, ONNX's Split
 *  and Slice along the channels). */
CLG_API clg_status clg_net_add_channel_slice(clg_net *net, size_t first, size_t count);
/** ShuffleNet's channel shuffle: output channel c is input channel (c % groups) * (C / groups)
 *  + c / groups (groups divides the channels C). */
CLG_API clg_status clg_net_add_channel_shuffle(clg_net *net, size_t groups);
/** Spatial padding (pad.h): constant, reflect or edge; negative constant pads crop. */
CLG_API clg_status clg_net_add_pad(clg_net *net, const clg_pad2d_desc *d);
/** A transposed convolution (ONNX's ConvTranspose, PyTorch's ConvTranspose2d): filters output
 *  channels, stride, padding, dilation and groups as d's (d->relu must be 0), out_pad_h and
 *  out_pad_w extra rows and columns at the end (below the stride); output (H - 1) sh - pt - pb
 *  + dh (R - 1) + 1 + out_pad_h rows. Weights C x filters/groups x R x S. */
/** A centre crop of the last layer's output to the named layer's H x W (U-Net's skips; an odd
 *  difference leaves the extra row and column at the bottom and right). */
CLG_API clg_status clg_net_add_crop(clg_net *net, const char *reference);
/** Up-sampling by whole factors (upsample.h), nearest or bilinear. */
CLG_API clg_status clg_net_add_upsample(clg_net *net, clg_upsample_mode mode, int factor_h,
                                        int factor_w);
CLG_API clg_status clg_net_add_conv_transpose(clg_net *net, size_t kernel_h, size_t kernel_w,
                                              size_t filters, const clg_conv2d_desc *d,
                                              int out_pad_h, int out_pad_w, int bias);

/** Builds a network from its text form (see README "Network text format"): one layer per
 *  line, '#' starts a comment, the first layer is `input HxWxC`. A syntax or shape error is
 *  CLG_ERR_INVALID_ARG / CLG_ERR_SHAPE with "line L, column C: ..." in the message. */
CLG_API clg_status clg_net_parse(clg_ctx *ctx, const char *text, clg_net **out);

/** The text form of net into buf (cap bytes, NUL-terminated); *len (may be NULL) receives the
 *  length needed without the NUL. buf may be NULL with cap 0 to ask the length.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG when cap is too small. */
CLG_API clg_status clg_net_text(const clg_net *net, char *buf, size_t cap, size_t *len);

/** A table of every layer (number, name, its line, inputs, output shape, learnable
 *  parameters, forward FLOPs per image), the totals and the batch buffers an image needs to
 *  train and to infer, like MATLAB's analyzeNetwork, into buf as clg_net_text does (cap bytes;
 *  *len the length needed). */
CLG_API clg_status clg_net_summary(const clg_net *net, char *buf, size_t cap, size_t *len);

CLG_API size_t clg_net_layer_count(const clg_net *net);
CLG_API clg_status clg_net_layer_info(const clg_net *net, size_t i, clg_layer_info *out);
/** Sample shape (n = 1). */
CLG_API clg_shape clg_net_input_shape(const clg_net *net);
/** Input normalisation, as MATLAB's imageInputLayer: channel c of every image the network
 *  takes (training, prediction, evaluation) becomes (x - mean[c]) / std[c], on the device as
 *  it arrives. count: the input's channels, or 1 (one value for all of them); 0 removes it.
 *  std > 0. Kept in the text form ("input 224x224x3 mean=0.485,0.456,0.406
 *  std=0.229,0.224,0.225"), model files, checkpoints and ONNX (a Sub and a Div). */
CLG_API clg_status clg_net_set_input_normalization(clg_net *net, const float *mean,
                                                   const float *std, size_t count);
/** The normalisation's values per channel into mean and std (cap each); *count the input's
 *  channels, or 0 without one. */
CLG_API clg_status clg_net_input_normalization(const clg_net *net, float *mean, float *std,
                                               size_t cap, size_t *count);
/** Output classes: the size of the softmax input (0 until the output layer is added). */
CLG_API size_t clg_net_class_count(const clg_net *net);
CLG_API clg_ctx *clg_net_ctx(const clg_net *net);

/** Class names (copied); count must equal the class count. Without them classes are "0".. */
CLG_API clg_status clg_net_set_class_names(clg_net *net, const char *const *names, size_t count);
/** Borrowed; NULL when i is out of range. */
CLG_API const char *clg_net_class_name(const clg_net *net, size_t i);

/** Initialises every parameter from seed, on the host, so that one seed gives the same
 *  network on every device: He normal (std sqrt(2 / fan_in)) for convolutions and fully
 *  connected layers followed by a ReLU-family activation (batch norm between allowed),
 *  Glorot uniform otherwise; biases and batch-norm shifts 0, scales 1, running mean 0 and
 *  variance 1. */
CLG_API clg_status clg_net_init(clg_net *net, uint64_t seed);

/** Number of floats in a parameter set. */
CLG_API size_t clg_net_param_count(const clg_net *net, clg_param_set which);
/** Copies a parameter set to or from host memory (count must equal clg_net_param_count). */
CLG_API clg_status clg_net_get_params(clg_net *net, clg_param_set which, float *host,
                                      size_t count);
CLG_API clg_status clg_net_set_params(clg_net *net, clg_param_set which, const float *host,
                                      size_t count);

/** The output of n samples (n x C x H x W floats) in inference mode (dropout off, batch norm
 *  on running statistics), clg_net_output_count values each: class probabilities (n x
 *  classes), per-pixel class probabilities (n x classes x H x W) or the regression's values.
 *  Works in chunks, any n. A net whose input is another size than the samples' is rebuilt
 *  with clg_net_resized first (fully convolutional networks on whole images). */
CLG_API clg_status clg_net_predict(clg_net *net, const float *images, size_t n, float *probs);
/** The outputs of the layer named `layer` ("l3", or a name it was given) for n samples in
 *  inference mode, as MATLAB's activations(net, X, layer): n x (its C x H x W) floats into
 *  out (cap floats at least); *shape (may be NULL) receives the layer's output shape per
 *  sample. The softmax layer gives the class probabilities. A convolution's outputs are its
 *  own, before any ReLU that follows it.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG for an unknown layer or an out too small. */
CLG_API clg_status clg_net_activations(clg_net *net, const float *images, size_t n,
                                       const char *layer, float *out, size_t cap,
                                       clg_shape *shape);
/** The k most likely classes of each sample, best first: classes and probs hold n x k. */
CLG_API clg_status clg_net_classify(clg_net *net, const float *images, size_t n, size_t k,
                                    int32_t *classes, float *probs);

typedef struct clg_layer_time {
    double forward_ms, backward_ms;  /* medians; backward of the output layer is the loss's */
} clg_layer_time;

/** Mean loss and accuracy of net on every sample of ds (inference mode), in batches of
 *  `batch`; ds's classes are matched to the net's by name (clg_datastore_match_classes). */
CLG_API clg_status clg_net_evaluate(clg_net *net, clg_datastore *ds, size_t batch,
                                    double *loss, double *accuracy);

/** clg_net_evaluate, with the confusion matrix: counts[t * K + p] (K = clg_net_class_count,
 *  K x K entries, zeroed first) samples of true class t predicted as p, the most likely class
 *  (the first of equals); loss and accuracy may be NULL. */
CLG_API clg_status clg_net_evaluate_confusion(clg_net *net, clg_datastore *ds, size_t batch,
                                              double *loss, double *accuracy, size_t *counts);

/** Times every layer's forward and backward (training mode) on a batch of `batch` samples of
 *  the current input buffer contents, each layer alone with the queue drained before and
 *  after: the median of `runs`. out holds clg_net_layer_count entries. For profiling; the
 *  gradients it leaves are meaningless. */
CLG_API clg_status clg_net_profile(clg_net *net, size_t batch, int runs, clg_layer_time *out);

/** The same for inference (clg_net_predict's buffers and fusions, such as a SiLU in the
 *  convolution before it, whose own time is then next to nothing): forward_ms of every layer,
 *  backward_ms 0. Replaces a training layout's buffers unless the net has trained. */
CLG_API clg_status clg_net_profile_inference(clg_net *net, size_t batch, int runs,
                                             clg_layer_time *out);

/** Learning-rate factor of the named layer's parameters (MATLAB's WeightLearnRateFactor and
 *  BiasLearnRateFactor together; 0 freezes them, 1 is the default); "lr=F" on the layer's
 *  line in the text form. @return CLG_OK; CLG_ERR_INVALID_ARG (no such layer, factor < 0). */
CLG_API clg_status clg_net_set_learn_rate_factor(clg_net *net, const char *layer, float factor);

/** Transfer learning (MATLAB's replaceLayer on the last fully connected layer): a copy of
 *  net, on its context, whose fully connected layer before the softmax has `classes` outputs,
 *  initialised from seed; every other layer keeps its parameters, batch-norm state and
 *  learning-rate factor. Class names start as "0", "1", ....
 *  @return CLG_OK; CLG_ERR_INVALID_ARG (classes < 2, an output not fed by a fully connected
 *          layer). */
CLG_API clg_status clg_net_replace_output(const clg_net *net, size_t classes, uint64_t seed,
                                          clg_net **out);

/** A copy of a fully convolutional net (no fully connected layer) that takes height x width
 *  images, with the same weights, state and class names: a denoiser or segmenter trained on
 *  patches run on whole images of any size. Sizes its layers cannot take (a pooling that does
 *  not divide, a crop's reference) fail as parsing would, naming the layer.
 *  @return CLG_OK; CLG_ERR_SHAPE (a size the net cannot take, or a net whose weights depend
 *          on the size); CLG_ERR_INVALID_ARG. */
CLG_API clg_status clg_net_resized(const clg_net *net, size_t height, size_t width,
                                   clg_net **out);

/** Saves the network (text, class names, parameters and batch-norm state) as a model file,
 *  atomically: the file at path is the old one or the complete new one, never a mix.
 *  @return CLG_OK; CLG_ERR_IO naming the path; CLG_ERR_NUMERICS when a weight or statistic
 *          is NaN or infinite (a diverged training's network: nothing is written). */
CLG_API clg_status clg_net_save(clg_net *net, const char *path);
/** Loads a model or checkpoint file onto ctx. The version and SHA-256 checksum are verified
 *  before anything is built. @return CLG_OK; CLG_ERR_IO (unreadable); CLG_ERR_CORRUPT
 *  (truncated, bad checksum, unknown version, inconsistent contents; *out stays NULL). */
CLG_API clg_status clg_net_load(clg_ctx *ctx, const char *path, clg_net **out);

#ifdef __cplusplus
}
#endif

#endif
