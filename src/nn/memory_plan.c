/* A network's batch buffers, for up to `capacity` samples, and their views of the current
 * batch, in one of two layouts. The training layout: a buffer per output and input gradient
 * (as the network plan says each layer owns them) and a gradient sum per output read twice,
 * kept for the backward pass.
 *
 * The inference layout: a forward pass that nothing will differentiate keeps an output only
 * until the last layer that reads it has run. Outputs live in a few pooled buffers, assigned
 * in layer order: a buffer is free again once every reader of what it holds is done, and a
 * layer never writes into a buffer one of its inputs is in (the inputs are still read).
 *
 * Some layers write no buffer of their own: the "home" of their output is another layer's,
 * as the network plan (plan.c) says: a ReLU fused into the layer before it and a layer whose
 * output is a view of its input (dropout, softmax) live in their input's home; a batch norm
 * or convolution whose residual sum is fused writes into the add's buffer, which therefore
 * comes into use at that layer. The buffers are laid out with no layer's exact output requested:
 * clg_net_activations stops the pass at the requested layer, so a fusion it turns off would
 * only have run after it. */
#include <stdlib.h>

#include "nn/layer_table.h"

enum { NO_HOME = CLG__PLAN_INPUT };

clg_tensor clg__net_view(const clg_tensor *full, size_t n)
{
    clg_tensor v = *full;
    v.shape.n = n;
    return v;
}

void clg__net_set_batch(clg_net *net, size_t n)
{
    net->n = n;
    net->x_n = clg__net_view(net->x, n);
    for (size_t i = 0; i < net->count; i++) {
        clg__layer *l = &net->layers[i];
        if (net->infer_layout)
            l->y_n = clg__net_pool_view(net, i, n);
        else
            l->y_n = l->y ? clg__net_view(l->y, n) : (clg_tensor){0};
        for (size_t k = 0; k < l->nin; k++)
            if (l->dx[k])
                l->dx_n[k] = clg__net_view(l->dx[k], n);
        if (l->dy)
            l->dy_n = clg__net_view(l->dy, n);
    }
}

static clg_status make(clg_net *net, size_t n, clg_shape per, clg_tensor **out)
{
    clg_tensor_destroy(*out);
    *out = NULL;
    return clg_tensor_create(net->ctx, (clg_shape){n, per.c, per.h, per.w}, out);
}

/* What the training layout holds for layer l (its plan says): its output, the gradient of
 * input k and, with several readers, the sum of their gradients. */
size_t clg__net_train_floats(const clg_net *net)
{
    size_t floats = clg_shape_numel(net->input);
    for (size_t i = 0; i < net->count; i++) {
        const clg__layer *l = &net->layers[i];
        floats += l->plan.own_output ? clg_shape_numel(l->out) : 0;
        for (size_t k = 0; k < l->nin; k++)
            floats += l->plan.own_dx[k] ? clg_shape_numel(l->ins[k]) : 0;
        floats += l->nuse > 1 ? clg_shape_numel(l->out) : 0;
    }
    return floats;
}

clg_status clg__net_reserve(clg_net *net, size_t capacity)
{
    if (!clg__net_has_output(net))
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "the net has no softmax output layer yet (add one last)");
    if (capacity <= net->capacity && net->x && !net->infer_layout)
        return CLG_OK;
    clg__net_pool_free(net); /* the training layout replaces the inference one */
    clg_status st = make(net, capacity, net->input, &net->x);
    for (size_t i = 0; st == CLG_OK && i < net->count; i++) {
        clg__layer *l = &net->layers[i];
        if (l->plan.own_output)
            st = make(net, capacity, l->out, &l->y);
        for (size_t k = 0; st == CLG_OK && k < l->nin; k++)
            if (l->plan.own_dx[k])
                st = make(net, capacity, l->ins[k], &l->dx[k]);
        if (st == CLG_OK && l->nuse > 1)
            st = make(net, capacity, l->out, &l->dy);
    }
    if (st != CLG_OK) {
        net->capacity = 0;
        return st;
    }
    net->capacity = capacity;
    clg__net_set_batch(net, capacity);
    return CLG_OK;
}

clg_status clg__net_upload(clg_net *net, const float *images, size_t n)
{
    if (n > net->capacity || !n)
        return clg__fail(net->ctx, CLG_ERR_INTERNAL, "batch of %zu for buffers of %zu", n,
                         net->capacity);
    clg__net_set_batch(net, n);
    clg_status st = clg_tensor_upload(&net->x_n, images, n * clg_shape_numel(net->input));
    return st == CLG_OK ? clg__net_normalise_input(net) : st;
}

void clg__net_pool_free(clg_net *net)
{
    for (size_t s = 0; s < net->npool; s++)
        clg_tensor_destroy(net->pool[s]);
    free(net->pool);
    net->pool = NULL;
    net->npool = 0;
    net->infer_layout = 0;
}

/* The training layout's buffers, which the inference layout replaces. */
static void drop_training_buffers(clg_net *net)
{
    for (size_t i = 0; i < net->count; i++) {
        clg__layer *l = &net->layers[i];
        clg_tensor_destroy(l->y);
        l->y = NULL;
        for (size_t k = 0; k < l->nin; k++) {
            clg_tensor_destroy(l->dx[k]);
            l->dx[k] = NULL;
        }
        clg_tensor_destroy(l->dy);
        l->dy = NULL;
    }
}

/* Sizes the slots (floats each) and gives every home one: in layer order, at its first
 * writer, the smallest free slot large enough, else the largest free one (grown), else a new
 * one. A slot is free once its home's last reader has run. Returns the slot count. */
static size_t assign(const clg_net *net, size_t capacity, const size_t *home, size_t *slot,
                     size_t *last_read, size_t *need, size_t *busy_until)
{
    for (size_t i = 0; i < net->count; i++)
        last_read[i] = i;
    for (size_t c = 0; c < net->count; c++)
        for (size_t k = 0; k < net->layers[c].nin; k++) {
            size_t p = net->layers[c].from[k];
            size_t h = p == CLG_NET_INPUT ? NO_HOME : home[p];
            if (h != NO_HOME && last_read[h] < c)
                last_read[h] = c;
        }
    size_t nslots = 0;
    for (size_t i = 0; i < net->count; i++) {
        size_t h = home[i];
        if (h == NO_HOME || slot[h] != NO_HOME)
            continue; /* a view, or a home already in use */
        size_t floats = capacity * clg_shape_numel(net->layers[h].out), fit = NO_HOME,
               grow = NO_HOME;
        for (size_t s = 0; s < nslots; s++) {
            if (busy_until[s] >= i)
                continue;
            if (need[s] >= floats && (fit == NO_HOME || need[s] < need[fit]))
                fit = s;
            else if (need[s] < floats && (grow == NO_HOME || need[s] > need[grow]))
                grow = s;
        }
        size_t pick = fit != NO_HOME ? fit : grow != NO_HOME ? grow : nslots++;
        need[pick] = need[pick] > floats ? need[pick] : floats; /* need[] starts at 0 */
        busy_until[pick] = last_read[h];
        slot[h] = pick;
    }
    return nslots;
}

/* Each layer's home, each home's slot and each slot's floats, in one allocation (home). */
typedef struct plan {
    size_t *home, *slot, *need;
} plan;

static clg_status make_plan(const clg_net *net, size_t capacity, plan *p, size_t *nslots)
{
    size_t n = net->count, *work = clg__calloc(5 * n, sizeof *work);
    if (!work)
        return clg__oom(net->ctx, "the inference buffers' plan");
    p->home = work, p->slot = work + n, p->need = work + 2 * n;
    size_t *last_read = work + 3 * n, *busy = work + 4 * n;
    for (size_t i = 0; i < n; i++) {
        p->home[i] = net->layers[i].plan.home;
        p->slot[i] = NO_HOME;
        busy[i] = NO_HOME;
    }
    *nslots = assign(net, capacity, p->home, p->slot, last_read, p->need, busy);
    return CLG_OK;
}

size_t clg__net_infer_floats(const clg_net *net)
{
    plan p;
    size_t nslots, floats = clg_shape_numel(net->input);
    if (!net->count || make_plan(net, 1, &p, &nslots) != CLG_OK)
        return 0;
    for (size_t s = 0; s < nslots; s++)
        floats += p.need[s];
    free(p.home);
    return floats;
}

clg_status clg__net_reserve_infer(clg_net *net, size_t capacity)
{
    if (net->capacity && !net->infer_layout) /* trained in: its buffers serve inference too */
        return clg__net_reserve(net, capacity);
    if (net->infer_layout && capacity <= net->capacity)
        return CLG_OK;
    if (!clg__net_has_output(net))
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "the net has no softmax output layer yet (add one last)");
    clg__net_pool_free(net);
    drop_training_buffers(net);
    net->capacity = 0;
    plan p;
    size_t nslots;
    clg_status st = make_plan(net, capacity, &p, &nslots);
    if (st != CLG_OK)
        return st;
    net->pool = clg__calloc(nslots ? nslots : 1, sizeof *net->pool);
    if (!net->pool)
        st = clg__oom(net->ctx, "clg_net_predict");
    for (size_t s = 0; st == CLG_OK && s < nslots; s++, net->npool++)
        st = clg_tensor_create(net->ctx, (clg_shape){1, p.need[s], 1, 1}, &net->pool[s]);
    if (st == CLG_OK) {
        clg_tensor_destroy(net->x);
        net->x = NULL;
        st = clg_tensor_create(net->ctx, (clg_shape){capacity, net->input.c, net->input.h,
                                                     net->input.w}, &net->x);
    }
    for (size_t i = 0; i < net->count; i++) /* every layer's view: its home's slot */
        net->layers[i].slot = p.home[i] == NO_HOME ? NO_HOME : p.slot[p.home[i]];
    free(p.home);
    if (st != CLG_OK) {
        clg__net_pool_free(net);
        return st;
    }
    net->infer_layout = 1;
    net->capacity = capacity;
    clg__net_set_batch(net, capacity);
    return CLG_OK;
}

/* Layer i's output view on its slot, for a batch of n (the net's input for NO_HOME: such a
 * layer is a view of it, set by its forward pass). */
clg_tensor clg__net_pool_view(const clg_net *net, size_t i, size_t n)
{
    const clg__layer *l = &net->layers[i];
    if (l->slot == NO_HOME)
        return clg__net_view(net->x, n);
    clg_tensor v = *net->pool[l->slot];
    v.shape = (clg_shape){n, l->out.c, l->out.h, l->out.w};
    return v;
}

size_t clg__net_buffer_bytes(const clg_net *net)
{
    size_t floats = net->x ? clg_tensor_numel(net->x) : 0;
    for (size_t s = 0; s < net->npool; s++)
        floats += clg_tensor_numel(net->pool[s]);
    for (size_t i = 0; i < net->count; i++) {
        const clg__layer *l = &net->layers[i];
        floats += l->y ? clg_tensor_numel(l->y) : 0;
        floats += l->dy ? clg_tensor_numel(l->dy) : 0;
        for (size_t k = 0; k < l->nin; k++)
            floats += l->dx[k] ? clg_tensor_numel(l->dx[k]) : 0;
    }
    return floats * sizeof(float);
}
