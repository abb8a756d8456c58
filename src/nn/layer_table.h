/* The layer table: for each layer kind one entry saying how it is written in the text form,
 * which settings it accepts, its output shape, its parameters, its forward and backward
 * passes and its cost. Everything in src/nn that depends on a layer's kind goes through it;
 * adding a kind is one entry (a file in src/nn/layers/) plus its ops. */
#ifndef CLGRAD_NN_LAYER_TABLE_H
#define CLGRAD_NN_LAYER_TABLE_H

#include "nn/nn_internal.h"
#include "nn/text_internal.h"

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
    /* It reads two or more inputs (named after its keyword in the text form). */
    int multi_input;
    /* Its backward pass gathers its output's gradient itself (clg__net_gather_relu). */
    int gathers_dy;
} clg__layer_def;

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
clg_status clg__layer_options(const clg__parser *p, const clg__token *tok, size_t ntok,
                              size_t first, clg__layer *l,
                              clg_status (*fn)(const clg__parser *p, const clg__option *o,
                                               clg__layer *l));

/* An option callback for kinds that take none. */
clg_status clg__layer_no_option(const clg__parser *p, const clg__option *o, clg__layer *l);

extern const clg__layer_def clg__layer_conv2d, clg__layer_pool2d, clg__layer_global_avg_pool,
    clg__layer_fc, clg__layer_batchnorm, clg__layer_dropout, clg__layer_activation,
    clg__layer_softmax_xent, clg__layer_add, clg__layer_concat;

#endif
