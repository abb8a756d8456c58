/* Transfer learning: a network's output replaced for another set of classes, and learning-
 * rate factors per layer (MATLAB's replaceLayer and WeightLearnRateFactor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"

clg_status clg_net_set_learn_rate_factor(clg_net *net, const char *layer, float factor)
{
    size_t at = net && layer ? clg__net_find(net, layer, strlen(layer)) : CLG__NOT_FOUND;
    if (at == CLG__NOT_FOUND || !(factor >= 0.0f && factor <= 1e6f))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_set_learn_rate_factor: %s (a layer of the net, a factor >= 0)",
                         at == CLG__NOT_FOUND ? "no such layer" : "bad factor");
    net->layers[at].lr_set = factor != 1.0f;
    net->layers[at].lr_factor = factor;
    return CLG_OK;
}

/* The net's text (malloc'd, *len its length) and room for it and `more` bytes in *out; NULL
 * when out of memory. */
static char *text_and_room(const clg_net *net, size_t more, size_t *len, char **out)
{
    if (clg_net_text(net, NULL, 0, len) != CLG_OK)
        return NULL;
    char *text = clg__malloc(*len + 1);
    *out = clg__malloc(*len + more);
    if (!text || !*out || clg_net_text(net, text, *len + 1, NULL) != CLG_OK) {
        free(text), free(*out);
        return NULL;
    }
    return text;
}

/* The text of net with layer `fc`'s line made "fc <classes>" (its options kept). */
static char *retarget(const clg_net *net, size_t fc, size_t classes)
{
    size_t len;
    char *out, *text = text_and_room(net, 64, &len, &out);
    if (!text)
        return NULL;
    char *line = text, *w = out;
    for (size_t k = 0; *line; k++) { /* line k: layer k - 1 (the input's is first) */
        size_t n = strcspn(line, "\n");
        if (k == fc + 1) {
            size_t word = strcspn(line + 3, " \n"); /* "fc N": the count after "fc " */
            w += sprintf(w, "fc %zu", classes);
            memcpy(w, line + 3 + word, n - 3 - word);
            w += n - 3 - word;
        } else {
            memcpy(w, line, n);
            w += n;
        }
        *w++ = '\n';
        line += n + (line[n] == '\n');
    }
    *w = '\0';
    free(text);
    return out;
}

/* Every layer's parameters, state and learning-rate factor from net into fresh (the same
 * layers), but layer `skip`'s parameters and state. */
static clg_status copy_layers(const clg_net *net, clg_net *fresh, size_t skip)
{
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < net->count; i++) {
        const clg__layer *a = &net->layers[i];
        clg__layer *b = &fresh->layers[i];
        for (size_t p = 0; st == CLG_OK && i != skip && p < a->nparams; p++)
            st = clg_tensor_copy(b->param[p], a->param[p]);
        for (size_t p = 0; st == CLG_OK && i != skip && p < 2; p++)
            if (a->state[p])
                st = clg_tensor_copy(b->state[p], a->state[p]);
        b->lr_set = a->lr_set, b->lr_factor = a->lr_factor;
    }
    return st;
}

clg_status clg_net_replace_output(const clg_net *net, size_t classes, uint64_t seed,
                                  clg_net **out)
{
    if (out)
        *out = NULL;
    if (!net || !out || classes < 2)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_net_replace_output: "
                         "net and out must not be NULL, classes >= 2");
    const clg__layer *soft = &net->layers[net->count - 1];
    size_t fc = soft->from[0];
    if (fc == CLG_NET_INPUT || !clg__layer_def_of(net->layers[fc].kind)->resizable_output)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_replace_output: the output "
                         "layer is not fed by a fully connected layer, whose outputs it would "
                         "change");
    char *text = retarget(net, fc, classes);
    if (!text)
        return clg__oom(net->ctx, "clg_net_replace_output");
    clg_net *fresh = NULL;
    clg_status st = clg_net_parse(net->ctx, text, &fresh);
    free(text);
    if (st == CLG_OK)
        st = clg_net_init(fresh, seed); /* the new layer's start; the rest copied over it */
    if (st == CLG_OK)
        st = copy_layers(net, fresh, fc);
    if (st != CLG_OK) {
        clg_net_destroy(fresh);
        return st;
    }
    *out = fresh;
    return CLG_OK;
}

/* The text of net with its input line's size made h x w (its channels and options kept). */
static char *resize_input(const clg_net *net, size_t h, size_t w)
{
    size_t len;
    char *out, *text = text_and_room(net, 64, &len, &out);
    if (!text)
        return NULL;
    /* "input HxWxC ...": the first line */
    size_t word = strcspn(text + 6, " \n");
    int n = sprintf(out, "input %zux%zux%zu", h, w, net->input.c);
    memcpy(out + n, text + 6 + word, len - 6 - word + 1);
    free(text);
    return out;
}

clg_status clg_net_resized(const clg_net *net, size_t height, size_t width, clg_net **out)
{
    if (out)
        *out = NULL;
    if (!net || !out || !height || !width || height > 65536 || width > 65536)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG, "clg_net_resized: net and "
                         "out must not be NULL, a size of 1 to 65536");
    char *text = resize_input(net, height, width);
    if (!text)
        return clg__oom(net->ctx, "clg_net_resized");
    clg_net *fresh = NULL;
    clg_status st = clg_net_parse(net->ctx, text, &fresh);
    free(text);
    if (st != CLG_OK)
        return clg__fail(net->ctx, st, "clg_net_resized: the network does not take %zux%zu "
                         "images: %s", height, width, clg_ctx_last_error(net->ctx));
    if (clg_net_param_count(fresh, CLG_PARAMS_LEARNABLE) !=
        clg_net_param_count(net, CLG_PARAMS_LEARNABLE))
        st = clg__fail(net->ctx, CLG_ERR_SHAPE, "clg_net_resized: at %zux%zu the network has "
                       "other weights (a fully connected layer's size follows its input's): it "
                       "is not fully convolutional", height, width);
    if (st == CLG_OK)
        st = copy_layers(net, fresh, (size_t)-1);
    if (st == CLG_OK && net->class_names)
        st = clg_net_set_class_names(fresh, (const char *const *)net->class_names, net->classes);
    if (st != CLG_OK) {
        clg_net_destroy(fresh);
        return st;
    }
    fresh->dropout_seed = net->dropout_seed;
    *out = fresh;
    return CLG_OK;
}
