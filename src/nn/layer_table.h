/* The layer table: for each layer kind one entry saying how it is written in the text form,
 * which settings it accepts, its output shape, its parameters, its forward and backward
 * passes and its cost. Everything in src/nn that depends on a layer's kind goes through it;
 * adding a kind is one entry (a file in src/nn/layers/) plus its ops. */
#ifndef CLGRAD_NN_LAYER_TABLE_H
#define CLGRAD_NN_LAYER_TABLE_H

#include "nn/nn_internal.h"
#include "nn/text_internal.h"

typedef struct clg__onnx_out clg__onnx_out; /* onnx_writer.h */

typedef struct clg__layer_def {
    clg_layer_kind kind;
    const char *const *keywords; /* its first word in the text form; NULL-terminated */
    /* Settings from a text line (tok[0] is the keyword) into l, whose kind is set. */
    clg_status (*parse)(const clg__parser *p, const clg__token *tok, size_t ntok, clg__layer *l);
    /* The line that parses back to the same settings. `inputs`: for a kind with several
     * inputs, the names of those after the first ("" when written with from=), which it puts
     * right after its keyword; the line's name= and from= follow. */
    void (*format)(const clg__layer *l, const char *inputs, clg__text_out *out);
    /* Settings the builder and the parser refuse: CLG_ERR_INVALID_ARG with the reason in why.
     * NULL: any. */
    clg_status (*check)(const clg__layer *l, char *why, size_t cap);
    /* Output shape per sample from l->in; an error with the reason in why. NULL: the input's. */
    clg_status (*infer)(const clg__layer *l, clg_shape *out, char *why, size_t cap);
    /* Allocates its learnables (nparams, decay) and state on the net's context. NULL: none. */
    clg_status (*alloc)(clg_net *net, clg__layer *l);
    /* Layer i's passes over the net's current batch. backward: NULL for the output layer,
     * whose gradient the loss gives. */
    clg_status (*forward)(clg_net *net, size_t i, int train, uint64_t step);
    clg_status (*backward)(clg_net *net, size_t i, uint64_t step);
    /* Sets the learnables and state to their starting values from seed (clg_net_init).
     * NULL: none. */
    clg_status (*init)(clg_net *net, size_t i, uint64_t seed);
    /* Floating-point operations of the forward pass, per sample. */
    double (*flops)(const clg__layer *l);
    /* Initialisation looks through it for the activation that follows (He for ReLUs). */
    int init_transparent;
    /* Whether it applies a ReLU-family function (ReLU, leaky ReLU, ELU) to its output, so that
     * what feeds it starts He-initialised. NULL: never. */
    int (*relu_family)(const clg__layer *l);
    /* Whether it is a one-input ReLU, max(x, 0), which a producer or reader may fuse. NULL:
     * never. */
    int (*is_relu)(const clg__layer *l);
    /* M > 0 when it is min(max(x, 0), M) (ReLU6), which a producer with a CLG__RELU_FORWARD
     * epilogue may apply (its backward pass, from the output, is the same); else 0. NULL:
     * never. */
    float (*capped_relu)(const clg__layer *l);
    /* Whether it is SiLU, x sigmoid(x), which a producer with epilogue_silu may apply at
     * inference. NULL: never. */
    int (*is_silu)(const clg__layer *l);
    /* What the network plan (plan.c) may fuse into it, each only when it alone reads the
     * other layer and that layer comes right after or before it: */
    int epilogue_relu;   /* a ReLU after it runs in its forward pass (CLG__RELU_MASKED: and its
                            backward pass applies the ReLU's mask) */
    int epilogue_silu;   /* at inference, a SiLU after it runs in its forward pass (training
                            keeps them apart: SiLU's backward pass reads its input) */
    int epilogue_sum;    /* a two-input sum after it, of its output and an earlier one, is
                            written by its forward pass (with the sum's ReLU) */
    int is_sum;          /* it is such a sum (an element-wise sum of its inputs) */
    int folds_relu;      /* a ReLU before it: its backward pass gives the gradient of the
                            ReLU's input, and the ReLU's backward pass is the identity */
    int view;            /* its output is a view of its input: CLG__VIEW_INFER at inference,
                            CLG__VIEW_ALWAYS in training too */
    /* Whether it writes a buffer of its own for input k's gradient in training (else its
     * gradient is a view, set by its backward pass). NULL: every input's. */
    int (*owns_input_grad)(const clg__layer *l, size_t k);
    /* The network's output: the last layer, its input the logits, its gradient the loss's;
     * the task it trains for. */
    int output;
    clg_task task;
    /* clg_net_replace_output may give it another output count (a classifier's last layer). */
    int resizable_output;
    /* Sets explicit pads for pad=same (a slice's channels for J/K) now that l->in is known
     * (NULL: the kind has none). */
    void (*resolve_same)(clg__layer *l);
    /* Adds the ONNX nodes and initializers that compute layer i (onnx_writer.h). */
    void (*onnx_export)(clg__onnx_out *ex, size_t i);
    /* Its input gradient is computed even when nothing reads it (the numerics check looks at
     * it then too). */
    int dx_always;
    /* It reads two or more inputs (named after its keyword in the text form). */
    int multi_input;
    /* Its backward pass gathers its output's gradient itself (clg__net_gather_relu). */
    int gathers_dy;
} clg__layer_def;

enum { CLG__RELU_FORWARD = 1, CLG__RELU_MASKED = 2 };
enum { CLG__VIEW_INFER = 1, CLG__VIEW_ALWAYS = 2 };

/* The entry of a kind (never NULL for a kind the builder made). */
const clg__layer_def *clg__layer_def_of(clg_layer_kind kind);
/* The entry whose keyword is word, or NULL. */
const clg__layer_def *clg__layer_def_named(const clg__token *word);
/* Every keyword, comma-separated, into buf (for messages). */
void clg__layer_keywords(char *buf, size_t cap);

/* Shared by the entries: a zeroed (or `fill`ed) tensor of shape s on the net's context. */
clg_status clg__layer_tensor(clg_net *net, clg_shape s, float fill, clg_tensor **out);
/* Weights (param[0]) He normal or Glorot uniform from seed, bias (param[1]) 0. */
clg_status clg__layer_init_weights(clg_net *net, size_t i, uint64_t seed);
/* The options after the positional arguments (from tok[first]), each given to fn. */
/* The settings a convolution and a transposed one share (pad, with same_ok also pad=same,
 * stride, dilation, groups, bias; conv2d.c): 1 with *st when o is one of them, else 0. */
int clg__conv_option(const clg__parser *p, const clg__option *o, int same_ok, clg__layer *l,
                     clg_status *st);

clg_status clg__layer_options(const clg__parser *p, const clg__token *tok, size_t ntok,
                              size_t first, clg__layer *l,
                              clg_status (*fn)(const clg__parser *p, const clg__option *o,
                                               clg__layer *l));

/* pad=same (l->pad_same 1) or same-lower (2) for a window of k[] with strides s[] and
 * dilations d[] (rows, columns), now that l->in is known: output = ceil(input / stride), the
 * total padding split in two, an odd one's extra row and column at the end (same) or at the
 * start (same-lower), as ONNX's SAME_UPPER and SAME_LOWER. Fills pad[] (top, bottom, left,
 * right) and clears pad_same; returns 0 and leaves them for a window or stride below 1 (the
 * kind's shape check names what is wrong). */
int clg__layer_pad_same(clg__layer *l, const long k[2], const long s[2], const long d[2],
                        int pad[4]);

/* An option callback for kinds that take none. */
clg_status clg__layer_no_option(const clg__parser *p, const clg__option *o, clg__layer *l);

extern const clg__layer_def clg__layer_conv2d, clg__layer_pool2d, clg__layer_global_avg_pool,
    clg__layer_fc, clg__layer_batchnorm, clg__layer_dropout, clg__layer_activation,
    clg__layer_softmax_xent, clg__layer_add, clg__layer_concat, clg__layer_mul, clg__layer_slice,
    clg__layer_shuffle, clg__layer_pad, clg__layer_conv_transpose,
    clg__layer_upsample, clg__layer_crop, clg__layer_regression, clg__layer_pixel_softmax;

#endif
