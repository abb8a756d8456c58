/* The network and layer structs, and what the training layer calls: forward and backward on
 * device buffers sized for a batch capacity, and the list of parameters with their gradients. */
#ifndef CLGRAD_NN_INTERNAL_H
#define CLGRAD_NN_INTERNAL_H

#include "clgrad/nn.h"
#include "ops/conv/conv_keep.h"
#include "ops/loss_internal.h"
#include "tensor/tensor_internal.h"

/* What the network plan (plan.c) decided for a layer from the layer list and the table's
 * fields: its fusions with its neighbours, the buffers it owns, where its output lives at
 * inference, and where its learnables sit in clg_net_get_params order. Layer passes, the
 * memory plan, the device group and the exporters read it instead of testing kinds. */
typedef struct clg__layer_plan {
    unsigned char relu_fused;   /* the ReLU after it runs in its forward pass ... */
    float relu_max;             /* ... capped at this (a clip to [0, max] after it; else 0) */
    unsigned char relu_masked;  /* ... and its backward pass applies the ReLU's mask */
    unsigned char relu_applied; /* (a ReLU) its producer applied it: its output is its input */
    unsigned char silu_fused;   /* the SiLU after it runs in its forward pass at inference */
    unsigned char silu_applied; /* (a SiLU) at inference its producer applied it: its output
                                   is its input there */
    unsigned char dx_given;     /* (a ReLU) its input's gradient is its output's: the reader
                                   after it or its producer took the mask into account */
    unsigned char sum_fused;    /* its forward pass writes the add after it (sum and ReLU) */
    unsigned char sum_written;  /* (an add) the layer before wrote it: nothing left to do */
    unsigned char relu_input;   /* its backward pass gives the gradient of the input of the
                                   ReLU before it */
    unsigned char own_output;   /* training layout: a buffer of its own for its output ... */
    unsigned char own_dx[CLG_LAYER_INPUTS]; /* ... and for each input's gradient */
    size_t home;                /* inference: the layer whose buffer holds its output
                                   (CLG__PLAN_INPUT: the net's input) */
    size_t param_first;         /* its first learnable's index among all learnable tensors */
    size_t lo, hi;              /* its learnables' floats: [lo, hi) of the flat vector */
    size_t slice;               /* its index among the layers that have learnables */
} clg__layer_plan;

#define CLG__PLAN_INPUT ((size_t)-1)

typedef struct clg__layer {
    clg_layer_kind kind;
    char name[CLG_LAYER_NAME];       /* "" until added: then given or "l<number>" */
    size_t nin;                      /* inputs: producers' indices (CLG_NET_INPUT: the net's) */
    size_t from[CLG_LAYER_INPUTS];
    clg_shape ins[CLG_LAYER_INPUTS]; /* their shapes, per sample */
    size_t nuse;                     /* inputs of later layers that read this one's output */
    clg_shape in, out;               /* per sample, n = 1; in is the first input's */
    /* settings, by kind */
    size_t kernel_h, kernel_w, filters;
    int bias;
    clg_conv2d_desc conv;
    clg_pool2d_desc pool;
    clg_activation act;
    float alpha, beta;               /* activation settings (clgrad/activation.h) */
    size_t outputs;
    size_t c_lo, c_hi;               /* slice: channels [c_lo, c_hi) of its input */
    size_t groups;                   /* shuffle: channel groups */
    clg_pad2d_desc padding;          /* pad */
    int out_pad_h, out_pad_w;        /* convt: output padding */
    int up_h, up_w;                  /* upsample: factors */
    clg_regression_loss regress;     /* regression: its loss */
    size_t nclass_w;                 /* pixelsoftmax: class weights given (0: all 1), */
    float class_w[CLG_CLASS_WEIGHTS_MAX]; /* their values (on the device in saved[0]) */
    clg_upsample_mode up_mode;
    float momentum, eps, p;
    int pad_same;                    /* while parsing: "pad=same" (or a slice's "J/K"),
                                        resolved once sizes are known */
    int lr_set;                      /* lr_factor given ("lr=F"), else the factor is 1 */
    float lr_factor;                 /* its parameters learn at this times the rate */
    int relu;                        /* add: ReLU of the sum */
    /* learnables with gradients (w, b or gamma, beta) and batch-norm state */
    size_t nparams;
    clg_tensor *param[2], *grad[2];
    int decay[2];                    /* 1: weights, which L2 regularisation applies to */
    clg_tensor *state[2];            /* running mean, running variance */
    clg_tensor *saved[2];            /* batch mean and 1/std of the last training forward
                                        (pixelsoftmax: saved[0] holds its class weights) */
    /* at the net's capacity, and views of the first n: the output; the gradient of each input
       (an add's are all its dy, or with a ReLU dx[0]); the output's gradient, which is the
       one reader's input gradient or, with several readers, their sum in dy */
    clg_tensor *y, *dx[CLG_LAYER_INPUTS], *dy;
    clg_tensor y_n, dx_n[CLG_LAYER_INPUTS], dy_n;
    size_t slot;                     /* inference layout: the pooled buffer of its output */
    clg__conv_keep keep;             /* conv: Winograd's V from training forward to backward */
    clg__layer_plan plan;            /* plan.c: kept current as layers are added */
} clg__layer;

struct clg_net {
    clg_ctx *ctx;
    clg_shape input;
    clg__layer *layers;
    size_t count, cap;
    char **class_names;    /* classes entries once set, else NULL */
    size_t classes;        /* classification, segmentation: the output's classes */
    clg_task task;         /* from the output layer */
    size_t capacity;       /* batch the buffers hold */
    size_t n;              /* batch of the views */
    clg_tensor *x;         /* input buffer */
    clg_tensor x_n;
    float *in_norm;        /* input normalisation: C means then C standard deviations, or NULL */
    clg_tensor *in_norm_t; /* the same on the device, made at the first upload */
    float *host_in;        /* predict staging */
    uint64_t dropout_seed; /* set by clg_net_init */
    size_t shard_first;    /* this batch's first sample within the whole mini-batch (replicas
                              of multi-device training), so dropout draws the same masks */
    clg__xent_pending loss;  /* a training step's loss, read back while backward runs */
    size_t exact_output;     /* 1 + a layer whose output must be its own (no ReLU fused into
                                it: clg_net_activations), or 0 */
    size_t take_from;        /* the next layer's default input (clg_net_take_from) ... */
    int take_from_set;       /* ... when set, else the previous layer's output */
    int labels_staged;       /* its labels are on the device for the backward pass */
    /* Inference layout (a net never trained in: predict, classify, evaluate, activations):
     * outputs in a few pooled buffers, each reused once the last reader of what it holds has
     * run, and no gradients; else (training layout) a buffer per output and gradient. */
    int infer_layout;
    clg_tensor **pool;
    size_t npool;
    size_t param_layers;     /* plan.c: layers that have learnables */
    size_t param_tensors;    /* ... their learnable tensors, and floats */
    size_t param_floats;
};

/* One learnable tensor and its gradient, for optimizers. */
typedef struct clg__param_ref {
    clg_tensor *param, *grad;
    int decay;
    size_t layer;
    float lr_factor;                 /* the layer's (1 unless lr= set it) */
} clg__param_ref;

/* Batch buffers for up to `capacity` samples (reallocated only to grow), the views pointed
 * at the first n by clg__net_set_batch. clg__net_reserve: the training layout, a buffer per
 * output and gradient, kept for the backward pass. clg__net_reserve_infer: the inference
 * layout (memory_plan.c), unless the net already has the training one. clg__net_pool_free
 * drops the inference layout's buffers; clg__net_buffer_bytes: bytes of batch buffers held. */
clg_status clg__net_reserve(clg_net *net, size_t capacity);
clg_status clg__net_reserve_infer(clg_net *net, size_t capacity);
void clg__net_pool_free(clg_net *net);
size_t clg__net_buffer_bytes(const clg_net *net);

/* Whether a forward pass runs the fusions only inference has (a SiLU in the convolution
 * before it): not training, in the inference layout, where the two layers share a buffer.
 * The producer and the fused layer both ask, so they always agree. */
static inline int clg__net_infer_fusions(const clg_net *net, int train)
{
    return !train && net->infer_layout;
}
void clg__net_set_batch(clg_net *net, size_t n);
clg_tensor clg__net_pool_view(const clg_net *net, size_t i, size_t n);
/* Floats per sample the two layouts hold (the summary's memory line). */
size_t clg__net_train_floats(const clg_net *net);
size_t clg__net_infer_floats(const clg_net *net);

/* Uploads n samples into the input buffer (n <= capacity; sets the batch). */
clg_status clg__net_upload(clg_net *net, const float *images, size_t n);

/* Forward over the current batch; train selects batch statistics and dropout (with step as
 * its counter). The logits are the input of the last layer: clg__net_logits. */
clg_status clg__net_forward(clg_net *net, int train, uint64_t step);
clg_tensor *clg__net_logits(clg_net *net);

/* Loss over the current batch: mean loss and correct count (blocks). */
clg_status clg__net_loss(clg_net *net, const void *targets, double *mean_loss,
                         size_t *correct);
/* Per sample: the values of the output (the loss's input), and of its targets (1 label, H x W
 * pixel labels, or the output's values for regression). */
size_t clg__net_output_values(const clg_net *net);
size_t clg__net_target_values(const clg_net *net);
/* The same for a training step without waiting: begin queues it (labels unchanged until end),
 * the backward pass that follows reuses its labels, end waits for the figures. */
clg_status clg__net_loss_begin(clg_net *net, const void *targets);
clg_status clg__net_loss_end(clg_net *net, double *mean_loss, size_t *correct);
void clg__net_loss_cancel(clg_net *net); /* after a failure: waits, keeps the error message */

/* Backward from the loss (gradient scaled by `scale`: 1/n for the mean, 1 for the sum),
 * filling every parameter gradient (overwritten). After a training forward with the same step. */
clg_status clg__net_backward(clg_net *net, const void *targets, float scale, uint64_t step);

/* CLGRAD_CHECK_NUMERICS: after the forward pass (backward 0), the first layer whose output
 * holds a NaN or infinity; after the backward pass, the first (in backward order) whose
 * gradients do. CLG_ERR_NUMERICS naming the layer, what, and the step. */
clg_status clg__net_check_numerics(clg_net *net, int backward, uint64_t step);

/* The same, calling done(user, i) as soon as layer i's backward is queued (its gradients are
 * final once the queue reaches that point): for reading them back while earlier layers still
 * compute. */
clg_status clg__net_backward_each(clg_net *net, const void *targets, float scale,
                                  uint64_t step, clg_status (*done)(void *user, size_t layer),
                                  void *user);

/* The learnable tensors in clg_net_get_params order; *count receives their number. refs may be
 * NULL to count. */
size_t clg__net_params(clg_net *net, clg__param_ref *refs, size_t cap);

/* Points the learnables of the k-th layer that has any at params[k] and their gradients at
 * grads[k], each holding that layer's packed in clg_net_get_params order from element 0
 * (buffers over slices of host memory, for replicas that compute on the host's master
 * weights: one per layer, so that the host may map one layer's while kernels use another's).
 * Views replace the tensors, whose contents are dropped. On failure the net may be part
 * rebound; destroy it. */
clg_status clg__net_bind_params(clg_net *net, const cl_mem *params, const cl_mem *grads);

/* clg_net_parse without argument checks; with ctx NULL the network is a spec: shapes and
 * settings, no tensors (for checking text without a device, e.g. fuzzing). */
clg_status clg__net_parse(clg_ctx *ctx, const char *text, clg_net **out);
/* The layers of a text that is not (yet) a whole network, as a spec (no context, no output
 * layer needed): their shapes, for the ONNX importer's Shape nodes. */
clg_status clg__net_parse_prefix(const char *text, clg_net **out);
/* An empty spec network (no context). */
clg_status clg__net_create_spec(clg_shape input, clg_net **out);

/* --- graph.c: names and inputs --- */

#define CLG__NOT_FOUND ((size_t)-2)
/* The input a layer added now reads by default: clg_net_take_from's, else the previous
 * layer's output (the network's input for the first). */
size_t clg__net_default_input(const clg_net *net);
/* The layer named by the len bytes at name: its index, CLG_NET_INPUT for "input",
 * CLG__NOT_FOUND. */
size_t clg__net_find(const clg_net *net, const char *name, size_t len);
/* Whether the len bytes at name can name a layer: NULL, or why not. */
const char *clg__net_bad_name(const clg_net *net, const char *name, size_t len);
/* Checks l's inputs and name for a layer added at index net->count and fills its input
 * shapes and default name; CLG_ERR_INVALID_ARG naming `call` otherwise. */
clg_status clg__net_connect(clg_net *net, clg__layer *l, const char *call);
/* l's inputs for a builder call of a kind with several: the default input, then the layers
 * named (1 to CLG_LAYER_INPUTS - 1 names); CLG_ERR_INVALID_ARG naming `call` otherwise. */
clg_status clg__net_find_inputs(clg_net *net, const char *const *names, size_t n,
                                clg__layer *l, const char *call);
/* The output layer may be added only when every other layer feeds a later one. */
clg_status clg__net_check_used(clg_net *net, const clg__layer *out, const char *call);
/* Whether the net needs more than a chain to say (names, inputs other than the previous
 * layer, several inputs): model files then carry the graph version. */
int clg__net_is_graph(const clg_net *net);
/* Layer i's output gradient into its dy_n, from the input gradients of the layers that read
 * it (their sum, in layer order, when several do). Backward, after those layers' passes. */
clg_status clg__net_gather_dy(clg_net *net, size_t i);
/* The same through a ReLU whose output is relu_y, into out, in one pass per reader (for a
 * layer whose table entry sets gathers_dy: an add with its ReLU). */
clg_status clg__net_gather_relu(clg_net *net, size_t i, const clg_tensor *relu_y, clg_tensor *out);
/* The names of l's inputs from the first-th on, comma-separated ("input" for the network's),
 * into buf. */
void clg__net_input_names(const clg_net *net, const clg__layer *l, size_t first, char *buf,
                          size_t cap);
/* 1 when layer i's first input is a layer's (so its gradient is needed), 0 for the net's. */
int clg__net_needs_dx(const clg_net *net, size_t i, size_t k);

/* Appends a layer whose kind and settings are filled in l: checks the settings and infers
 * the shapes through the layer table, allocates its parameters (not for a spec). Errors name
 * `call`, or the layer's number and text. */
clg_status clg__net_append(clg_net *net, clg__layer *l, const char *call);

/* The text line of layer l, which is or will be layer i of net, into buf. */
void clg__layer_text(const clg_net *net, const clg__layer *l, size_t i, char *buf, size_t cap);

/* What the layer table's passes use: a view of the first n samples of a batch buffer, layer
 * i's (first, or k-th) input and the gradient of its output (gathered from its readers), the
 * dropout seed of layer i, and the fusions the net makes: a ReLU that alone reads a
 * convolution runs in the convolution's forward pass; a pooling layer that alone reads a ReLU
 * gives the gradient of the ReLU's input, so that the ReLU's backward pass is the identity. */
clg_tensor clg__net_view(const clg_tensor *full, size_t n);
clg_tensor *clg__net_input(clg_net *net, size_t i);
clg_tensor *clg__net_input_k(clg_net *net, size_t i, size_t k);
/* Layer i whose plan fuses the residual sum after it: that sum's other input (the residual),
 * its ReLU in *relu; layer i's output made the sum's, which it writes. */
clg_tensor *clg__net_fused_sum(clg_net *net, size_t i, int *relu);
/* input_norm.c: " mean=.. std=.." for the input line (empty without; its length returned,
 * as snprintf); the uploaded batch normalised in place. */
size_t clg__net_norm_text(const clg_net *net, char *buf, size_t cap);
/* The same for c means then c standard deviations (ms; NULL: none): " mean=a,b,c std=d,e,f",
 * one value each when all channels share it. */
size_t clg__norm_text(const float *ms, size_t c, char *buf, size_t cap);
clg_status clg__net_normalise_input(clg_net *net);
clg_tensor *clg__net_output_grad(clg_net *net, size_t i);
uint64_t clg__net_dropout_seed(const clg_net *net, size_t layer);

/* --- plan.c: the network plan (each layer's clg__layer_plan) --- */

/* Recomputes every layer's plan from the layer list, the table and net->exact_output (a
 * layer whose output must be its own gets no ReLU or sum fused into it). O(layers), no
 * allocation; called whenever the list or exact_output changes. */
void clg__net_plan_update(clg_net *net);
/* Whether the net ends in its output layer (the loss reads the last layer's input). */
int clg__net_has_output(const clg_net *net);

/* Model file layout: a 24-byte header (magic, version, flags, payload length), sections of
 * (u32 tag, u64 length, bytes), then the SHA-256 of everything before it. */
#define CLG__MODEL_MAGIC "CLGRADM" /* 8 bytes with its NUL */
#define CLG__MODEL_VERSION 1u        /* a chain of layers (what every earlier library wrote) */
#define CLG__MODEL_VERSION_GRAPH 2u  /* a layer graph: names and inputs in the network text */
#define CLG__MODEL_HEADER 24
enum { CLG__SEC_NET = 1, CLG__SEC_CLASSES = 2, CLG__SEC_LEARNABLE = 3, CLG__SEC_STATE = 4,
       CLG__SEC_TRAIN = 5, CLG__SEC_META = 6 };
typedef struct clg__model_sections {
    const unsigned char *data[7];  /* by tag; NULL when absent */
    size_t len[7];
} clg__model_sections;

/* Checks a whole file image (magic, version, length, checksum) and finds its sections;
 * CLG_ERR_CORRUPT naming path and the reason. */
clg_status clg__model_verify(clg_ctx *ctx, const char *path, const unsigned char *p, size_t len,
                             clg__model_sections *s);

/* Model files. A blob of the training layer's state (optimizer moments, position) travels in
 * the file opaquely. */
clg_status clg__model_save(clg_net *net, const char *path, const void *train_blob,
                           size_t train_len);
/* Loads; *train_blob (malloc'd, may be NULL when the file has none) is the caller's. */
clg_status clg__model_load(clg_ctx *ctx, const char *path, clg_net **out, void **train_blob,
                           size_t *train_len);

#endif
