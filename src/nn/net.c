/* Building a network: layers added one by one, each connected to earlier ones (graph.c) with
 * its shape inferred and its parameters allocated on the net's context; and the accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_table.h"

static void free_names(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void layer_free(clg__layer *l)
{
    for (int i = 0; i < 2; i++) {
        clg_tensor_destroy(l->param[i]);
        clg_tensor_destroy(l->grad[i]);
        clg_tensor_destroy(l->state[i]);
        clg_tensor_destroy(l->saved[i]);
    }
    clg_tensor_destroy(l->y);
    for (size_t k = 0; k < CLG_LAYER_INPUTS; k++)
        clg_tensor_destroy(l->dx[k]);
    clg_tensor_destroy(l->dy);
    clg__conv_keep_free(&l->keep);
}

clg_status clg_net_create(clg_ctx *ctx, clg_shape input, clg_net **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_net_create: ctx and out must not be NULL");
    input.n = 1;
    if (!clg_shape_numel(input))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG,
                         "clg_net_create: input %zux%zux%zu (CxHxW) has a zero size", input.c,
                         input.h, input.w);
    clg_net *net = clg__calloc(1, sizeof *net);
    if (!net)
        return clg__oom(ctx, "clg_net_create");
    net->ctx = ctx;
    net->input = input;
    *out = net;
    return CLG_OK;
}

void clg_net_destroy(clg_net *net)
{
    if (!net)
        return;
    for (size_t i = 0; i < net->count; i++)
        layer_free(&net->layers[i]);
    free(net->layers);
    free_names(net->class_names, net->classes);
    clg__xent_pending_free(&net->loss);
    clg__net_pool_free(net);
    clg_tensor_destroy(net->x);
    clg_tensor_destroy(net->in_norm_t);
    free(net->in_norm);
    free(net->host_in);
    free(net);
}

clg_status clg__net_create_spec(clg_shape input, clg_net **out)
{
    clg_net *net = clg__calloc(1, sizeof *net);
    if (!net)
        return clg__oom(NULL, "net text");
    input.n = 1;
    net->input = input;
    *out = net;
    return CLG_OK;
}

void clg__layer_text(const clg_net *net, const clg__layer *l, size_t i, char *buf, size_t cap)
{
    /* inputs after the first follow an add's or concat's keyword when the first is the
     * previous line's output; otherwise from= names them all */
    size_t prev = i ? i - 1 : CLG_NET_INPUT;
    int plain = l->nin && l->from[0] == prev;
    char names[CLG_LAYER_INPUTS * CLG_LAYER_NAME], own[CLG_LAYER_NAME];
    clg__net_input_names(net, l, plain ? 1 : 0, names, sizeof names);
    clg__text_out o = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    clg__layer_def_of(l->kind)->format(l, plain ? names : "", &o);
    snprintf(own, sizeof own, "l%zu", i + 1);
    if (l->name[0] && strcmp(l->name, own) != 0)
        clg__text_put(&o, " name=%s", l->name);
    if (!plain)
        clg__text_put(&o, " from=%s", names);
    if (l->lr_set)
        clg__text_put(&o, " lr=%.9g", (double)l->lr_factor);
}

/* Shape inference; CLG_ERR_SHAPE naming the layer when the input cannot feed it. */
static clg_status infer(clg_net *net, clg__layer *l, const clg__layer_def *def)
{
    if (l->pad_same && def->resolve_same)
        def->resolve_same(l);
    clg_shape in = l->in;
    l->out = in;
    char why[512] = "", text[200];
    clg_status st = def->infer ? def->infer(l, &l->out, why, sizeof why) : CLG_OK;
    if (st != CLG_OK) {
        clg__layer_text(net, l, net->count, text, sizeof text);
        return clg__fail(net->ctx, st == CLG_ERR_INVALID_ARG ? CLG_ERR_INVALID_ARG : CLG_ERR_SHAPE,
                         "layer %zu (%s): input %zux%zux%zu (CxHxW): %s", net->count + 1, text,
                         in.c, in.h, in.w, why);
    }
    l->out.n = 1;
    return CLG_OK;
}

/* Learnables and state as the kind's entry makes them, then their gradients. */
static clg_status alloc_params(clg_net *net, clg__layer *l, const clg__layer_def *def)
{
    clg_status st = def->alloc ? def->alloc(net, l) : CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < l->nparams; i++)
        st = clg__layer_tensor(net, clg_tensor_shape(l->param[i]), 0.0f, &l->grad[i]);
    return st;
}

clg_status clg__net_append(clg_net *net, clg__layer *l, const char *call)
{
    if (!net)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "%s: net must not be NULL", call);
    const clg__layer_def *def = clg__layer_def_of(l->kind);
    char why[256];
    clg_status st = def->check ? def->check(l, why, sizeof why) : CLG_OK;
    if (st != CLG_OK)
        return clg__fail(net->ctx, st, "%s: %s", call, why);
    if (clg__net_has_output(net))
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "%s: nothing can follow the softmax output layer", call);
    st = clg__net_connect(net, l, call);
    if (st == CLG_OK && def->output)
        st = clg__net_check_used(net, l, call);
    if (st == CLG_OK)
        st = infer(net, l, def);
    if (st != CLG_OK)
        return st;
    if (net->count == net->cap) {
        size_t cap = net->cap ? 2 * net->cap : 8;
        clg__layer *bigger = clg__realloc(net->layers, cap * sizeof *bigger);
        if (!bigger)
            return clg__oom(net->ctx, call);
        net->layers = bigger;
        net->cap = cap;
    }
    st = net->ctx ? alloc_params(net, l, def) : CLG_OK; /* no ctx: a spec only */
    if (st != CLG_OK) {
        layer_free(l);
        return st;
    }
    net->layers[net->count++] = *l;
    for (size_t k = 0; k < l->nin; k++)
        if (l->from[k] != CLG_NET_INPUT)
            net->layers[l->from[k]].nuse++;
    net->take_from_set = 0;
    if (def->output) {
        net->task = def->task;
        net->classes = def->task == CLG_TASK_CLASSIFICATION ? clg_shape_numel(l->in)
                       : def->task == CLG_TASK_SEGMENTATION ? l->in.c
                                                            : 0;
    }
    clg__net_plan_update(net);
    net->capacity = 0; /* buffers are remade for the new layer list */
    return CLG_OK;
}

size_t clg_net_layer_count(const clg_net *net)
{
    return net ? net->count : 0;
}

clg_status clg_net_layer_info(const clg_net *net, size_t i, clg_layer_info *out)
{
    if (!net || !out || i >= net->count)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_layer_info: no layer %zu (the net has %zu)", i,
                         net ? net->count : 0);
    const clg__layer *l = &net->layers[i];
    memset(out, 0, sizeof *out);
    out->kind = l->kind;
    clg__layer_text(net, l, i, out->text, sizeof out->text);
    snprintf(out->name, sizeof out->name, "%s", l->name);
    out->inputs = l->nin;
    for (size_t k = 0; k < l->nin; k++)
        out->input[k] = l->from[k];
    out->output = l->out;
    out->flops = clg__layer_def_of(l->kind)->flops(l);
    for (size_t p = 0; p < l->nparams; p++)
        out->params += clg_tensor_numel(l->param[p]);
    return CLG_OK;
}

clg_shape clg_net_input_shape(const clg_net *net)
{
    clg_shape none = {0, 0, 0, 0};
    return net ? net->input : none;
}

clg_task clg_net_task(const clg_net *net)
{
    return net ? net->task : CLG_TASK_NONE;
}

size_t clg_net_output_count(const clg_net *net)
{
    return net ? clg__net_output_values(net) : 0;
}

clg_shape clg_net_output_shape(const clg_net *net)
{
    clg_shape none = {0, 0, 0, 0};
    return net && net->count ? net->layers[net->count - 1].in : none;
}

size_t clg_net_class_count(const clg_net *net)
{
    return net ? net->classes : 0;
}

clg_ctx *clg_net_ctx(const clg_net *net)
{
    return net ? net->ctx : NULL;
}

clg_status clg_net_set_class_names(clg_net *net, const char *const *names, size_t count)
{
    if (!net || !names)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_set_class_names: net and names must not be NULL");
    if (!net->classes || count != net->classes)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "clg_net_set_class_names: %zu names for a net of %zu classes", count,
                         net->classes);
    char **copy = clg__calloc(count, sizeof *copy);
    for (size_t i = 0; copy && i < count; i++) {
        if (!names[i] || !names[i][0] || strchr(names[i], '\n')) {
            free_names(copy, count);
            return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                             "clg_net_set_class_names: name %zu is empty or has a line break", i);
        }
        copy[i] = clg__strdup(names[i]);
        if (!copy[i]) {
            free_names(copy, count);
            copy = NULL;
        }
    }
    if (!copy)
        return clg__oom(net->ctx, "clg_net_set_class_names");
    free_names(net->class_names, net->classes);
    net->class_names = copy;
    return CLG_OK;
}

const char *clg_net_class_name(const clg_net *net, size_t i)
{
    static const char *const digits[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    if (!net || i >= net->classes)
        return NULL;
    if (net->class_names)
        return net->class_names[i];
    return i < 10 ? digits[i] : "?";
}

size_t clg__net_params(clg_net *net, clg__param_ref *refs, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < net->count; i++)
        for (size_t p = 0; p < net->layers[i].nparams; p++, n++)
            if (refs && n < cap)
                refs[n] = (clg__param_ref){net->layers[i].param[p], net->layers[i].grad[p],
                                           net->layers[i].decay[p], i,
                                           net->layers[i].lr_set ? net->layers[i].lr_factor
                                                                 : 1.0f};
    return n;
}

/* A view of mem at element offset `at` with t's shape, replacing t. */
static clg_status rebind(clg_tensor **t, cl_mem mem, size_t at)
{
    clg_tensor *v = clg__calloc(1, sizeof *v);
    if (!v)
        return clg__fail((*t)->ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "binding parameters: out of host memory");
    *v = **t;
    v->mem = mem;
    v->offset = at;
    clRetainMemObject(mem);
    clg_tensor_destroy(*t);
    *t = v;
    return CLG_OK;
}

clg_status clg__net_bind_params(clg_net *net, const cl_mem *params, const cl_mem *grads)
{
    clg_status st = CLG_OK;
    for (size_t i = 0; i < net->count; i++) {
        clg__layer *l = &net->layers[i];
        size_t at = 0, k = l->plan.slice;
        for (size_t p = 0; st == CLG_OK && p < l->nparams; p++) {
            st = rebind(&l->param[p], params[k], at);
            if (st == CLG_OK)
                st = rebind(&l->grad[p], grads[k], at);
            at += clg_tensor_numel(l->param[p]);
        }
    }
    return st;
}

/* The tensors of a parameter set in order, visited with fn. */
static clg_status each_param(clg_net *net, clg_param_set which,
                             clg_status (*fn)(clg_tensor *t, void *host, size_t n), void *host)
{
    size_t offset = 0;
    for (size_t i = 0; i < net->count; i++) {
        clg__layer *l = &net->layers[i];
        clg_tensor **set = which == CLG_PARAMS_STATE ? l->state : l->param;
        size_t count = which == CLG_PARAMS_STATE ? (l->state[0] ? 2 : 0) : l->nparams;
        for (size_t p = 0; p < count; p++) {
            size_t n = clg_tensor_numel(set[p]);
            clg_status st = fn(set[p], (float *)host + offset, n);
            if (st != CLG_OK)
                return st;
            offset += n;
        }
    }
    return CLG_OK;
}

size_t clg_net_param_count(const clg_net *net, clg_param_set which)
{
    if (!net)
        return 0;
    if (which == CLG_PARAMS_LEARNABLE)
        return net->param_floats; /* the network plan's */
    size_t total = 0;
    for (size_t i = 0; which == CLG_PARAMS_STATE && i < net->count; i++)
        if (net->layers[i].state[0])
            total += 2 * clg_tensor_numel(net->layers[i].state[0]);
    return total;
}

static clg_status get_one(clg_tensor *t, void *host, size_t n)
{
    return clg_tensor_download(t, host, n);
}

static clg_status set_one(clg_tensor *t, void *host, size_t n)
{
    return clg_tensor_upload(t, host, n);
}

static clg_status check_set(clg_net *net, clg_param_set which, const void *host, size_t count,
                            const char *call)
{
    if (!net || !host)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "%s: net and host must not be NULL", call);
    if (which != CLG_PARAMS_LEARNABLE && which != CLG_PARAMS_STATE)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: unknown parameter set %d", call,
                         (int)which);
    size_t want = clg_net_param_count(net, which);
    if (count != want)
        return clg__fail(net->ctx, CLG_ERR_SHAPE, "%s: count %zu, the net has %zu", call, count,
                         want);
    return CLG_OK;
}

clg_status clg_net_get_params(clg_net *net, clg_param_set which, float *host, size_t count)
{
    clg_status st = check_set(net, which, host, count, "clg_net_get_params");
    return st == CLG_OK ? each_param(net, which, get_one, host) : st;
}

clg_status clg_net_set_params(clg_net *net, clg_param_set which, const float *host, size_t count)
{
    clg_status st = check_set(net, which, host, count, "clg_net_set_params");
    return st == CLG_OK ? each_param(net, which, set_one, (void *)host) : st;
}
