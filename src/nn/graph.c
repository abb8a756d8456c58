/* Layer graphs: each layer reads the previous layer's output or any earlier named layer's;
 * add and concat read several. Inputs only ever name earlier layers, so the order layers are
 * added in is a topological order and a cycle cannot be written down; what is checked here is
 * that every name is known and unique, that every layer but the output feeds a later one, and,
 * in the backward pass, the sum of the gradients where one output feeds several layers. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"

size_t clg__net_default_input(const clg_net *net)
{
    if (net->take_from_set)
        return net->take_from;
    return net->count ? net->count - 1 : CLG_NET_INPUT;
}

/* "l<number>": the name a layer has unless given one. */
static int is_default_form(const char *name, size_t len)
{
    if (len < 2 || name[0] != 'l')
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!isdigit((unsigned char)name[i]))
            return 0;
    return 1;
}

size_t clg__net_find(const clg_net *net, const char *name, size_t len)
{
    if (len == 5 && !strncmp(name, "input", 5))
        return CLG_NET_INPUT;
    for (size_t i = 0; i < net->count; i++)
        if (strlen(net->layers[i].name) == len && !strncmp(net->layers[i].name, name, len))
            return i;
    return CLG__NOT_FOUND;
}

const char *clg__net_bad_name(const clg_net *net, const char *name, size_t len)
{
    if (!len || len >= CLG_LAYER_NAME)
        return "a name has 1 to 31 characters";
    if (!isalpha((unsigned char)name[0]) && name[0] != '_')
        return "a name starts with a letter or '_'";
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("_-.", name[i]))
            return "a name holds letters, digits, '_', '-' and '.'";
    if ((len == 5 && !strncmp(name, "input", 5)) || is_default_form(name, len))
        return "\"input\" and \"l<number>\" are the network's own names";
    if (clg__net_find(net, name, len) != CLG__NOT_FOUND)
        return "another layer has this name";
    return NULL;
}

clg_status clg__net_connect(clg_net *net, clg__layer *l, const char *call)
{
    const clg__layer_def *def = clg__layer_def_of(l->kind);
    if (!l->nin) {
        l->nin = 1;
        l->from[0] = clg__net_default_input(net);
    }
    if (l->nin > 1 && !def->multi_input)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: %s reads one input, not %zu", call,
                         def->keywords[0], l->nin);
    if (def->multi_input && l->nin < 2)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: %s needs at least 2 inputs", call,
                         def->keywords[0]);
    for (size_t k = 0; k < l->nin; k++) {
        if (l->from[k] != CLG_NET_INPUT && l->from[k] >= net->count)
            return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: input %zu is not an earlier "
                             "layer", call, k + 1);
        l->ins[k] = l->from[k] == CLG_NET_INPUT ? net->input : net->layers[l->from[k]].out;
    }
    l->in = l->ins[0];
    if (!l->name[0])
        snprintf(l->name, sizeof l->name, "l%zu", net->count + 1);
    return CLG_OK;
}

clg_status clg__net_check_used(clg_net *net, const clg__layer *out, const char *call)
{
    for (size_t i = 0; i < net->count; i++) {
        size_t uses = net->layers[i].nuse;
        for (size_t k = 0; k < out->nin; k++)
            uses += out->from[k] == i;
        if (!uses)
            return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: layer %zu (%s) feeds no later "
                             "layer: every branch must reach the output", call, i + 1,
                             net->layers[i].name);
    }
    return CLG_OK;
}

int clg__net_is_graph(const clg_net *net)
{
    for (size_t i = 0; i < net->count; i++) {
        const clg__layer *l = &net->layers[i];
        size_t prev = i ? i - 1 : CLG_NET_INPUT;
        char own[CLG_LAYER_NAME];
        snprintf(own, sizeof own, "l%zu", i + 1);
        if (l->nin != 1 || l->from[0] != prev || strcmp(l->name, own) != 0)
            return 1;
    }
    return 0;
}

void clg__net_input_names(const clg_net *net, const clg__layer *l, size_t first, char *buf,
                          size_t cap)
{
    clg__text_out o = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    for (size_t k = first; k < l->nin; k++)
        clg__text_put(&o, "%s%s", k > first ? "," : "",
                      l->from[k] == CLG_NET_INPUT ? "input" : net->layers[l->from[k]].name);
}

int clg__net_needs_dx(const clg_net *net, size_t i, size_t k)
{
    return net->layers[i].from[k] != CLG_NET_INPUT;
}

/* The readers' gradients of layer i's output summed into out (in reader order), through a
 * ReLU whose output is mask when mask is not NULL; one reader's is a view when unmasked. */
static clg_status gather(clg_net *net, size_t i, const clg_tensor *mask, clg_tensor *out)
{
    clg__layer *l = &net->layers[i];
    const clg_tensor *sum = NULL; /* the readers' gradients so far */
    size_t seen = 0;
    clg_status st = CLG_OK;
    for (size_t c = i + 1; c < net->count && st == CLG_OK; c++)
        for (size_t k = 0; k < net->layers[c].nin && st == CLG_OK; k++) {
            if (net->layers[c].from[k] != i)
                continue;
            clg_tensor *d = &net->layers[c].dx_n[k];
            int last = ++seen == l->nuse;
            if (l->nuse == 1 && !mask)
                *out = *d; /* the one reader's input gradient, no copy */
            else if (l->nuse == 1)
                st = clg_activation_backward(net->ctx, CLG_ACT_RELU, 0.0f, mask, mask, d, out);
            else if (!sum)
                sum = d; /* added to the second in one pass, not copied first */
            else if (last && mask)
                st = clg__tensor_add_masked(net->ctx, sum, d, mask, out);
            else {
                st = clg__tensor_add(net->ctx, sum, d, last ? out : &l->dy_n, 0);
                sum = &l->dy_n; /* the running sum, when more readers follow */
            }
        }
    return st;
}

clg_status clg__net_gather_dy(clg_net *net, size_t i)
{
    return gather(net, i, NULL, &net->layers[i].dy_n);
}

clg_status clg__net_gather_relu(clg_net *net, size_t i, const clg_tensor *relu_y, clg_tensor *out)
{
    return gather(net, i, relu_y, out);
}

/* --- the builder's graph calls --- */

clg_status clg__net_find_inputs(clg_net *net, const char *const *names, size_t n,
                                clg__layer *l, const char *call)
{
    if (!net)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "%s: net must not be NULL", call);
    if ((n && !names) || n + 1 > CLG_LAYER_INPUTS)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: 1 to %d names", call,
                         CLG_LAYER_INPUTS - 1);
    l->from[l->nin++] = clg__net_default_input(net);
    for (size_t k = 0; k < n; k++) {
        size_t at = names[k] ? clg__net_find(net, names[k], strlen(names[k])) : CLG__NOT_FOUND;
        if (at == CLG__NOT_FOUND)
            return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: no layer named \"%s\"", call,
                             names[k] ? names[k] : "(null)");
        l->from[l->nin++] = at;
    }
    return CLG_OK;
}

clg_status clg_net_name_layer(clg_net *net, const char *name)
{
    if (!net || !name || !net->count)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_name_layer: net and name must not be NULL, and a layer added");
    const char *bad = clg__net_bad_name(net, name, strlen(name));
    if (bad)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_name_layer: \"%s\": %s", name,
                         bad);
    snprintf(net->layers[net->count - 1].name, CLG_LAYER_NAME, "%s", name);
    return CLG_OK;
}

clg_status clg_net_take_from(clg_net *net, const char *name)
{
    size_t at = net && name ? clg__net_find(net, name, strlen(name)) : CLG__NOT_FOUND;
    if (at == CLG__NOT_FOUND)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_take_from: no layer named \"%s\"", name ? name : "(null)");
    net->take_from = at;
    net->take_from_set = 1;
    return CLG_OK;
}
