/* The network plan: from the layer list and the layer table's fields, each layer's fusions
 * with its neighbours (a ReLU or a residual sum run by its producer, a ReLU's gradient given
 * by the pooling layer after it), the buffers it owns in training, where its output lives at
 * inference, and its learnables' place in the flat parameter vector. Everything that depends
 * on how layers combine reads the plan; nothing outside the table tests a layer's kind. */
#include "nn/layer_table.h"

static const clg__layer_def *def_at(const clg_net *net, size_t i)
{
    return clg__layer_def_of(net->layers[i].kind);
}

/* Whether layer i alone reads layer p's output, as its only input. */
static int sole_reader(const clg_net *net, size_t p, size_t i)
{
    return i < net->count && net->layers[p].nuse == 1 && net->layers[i].nin == 1 &&
           net->layers[i].from[0] == p;
}

static int is_relu(const clg_net *net, size_t i)
{
    const clg__layer_def *d = def_at(net, i);
    return d->is_relu && d->is_relu(&net->layers[i]);
}

/* M of a clip to [0, M] at i (ReLU6), else 0. */
static float capped_relu(const clg_net *net, size_t i)
{
    const clg__layer_def *d = def_at(net, i);
    return d->capped_relu ? d->capped_relu(&net->layers[i]) : 0.0f;
}

/* The ReLU right after p, its only reader, runs in p's forward pass (relu(y) > 0 exactly
 * where y > 0, so the ReLU's backward pass reads the same mask either way); so does a clip
 * to [0, M] after a producer that only applies it (the clip's mask, 0 < x < M, is the same
 * read from its output). */
static int relu_fused(const clg_net *net, size_t p)
{
    int epilogue = def_at(net, p)->epilogue_relu;
    return epilogue && net->exact_output != p + 1 && sole_reader(net, p, p + 1) &&
           (is_relu(net, p + 1) ||
            (epilogue == CLG__RELU_FORWARD && capped_relu(net, p + 1) > 0.0f));
}

static int is_silu(const clg_net *net, size_t i)
{
    const clg__layer_def *d = def_at(net, i);
    return d->is_silu && d->is_silu(&net->layers[i]);
}

/* At inference, the SiLU right after p, its only reader, runs in p's forward pass (training
 * keeps it apart: its backward pass reads p's output). */
static int silu_fused(const clg_net *net, size_t p)
{
    return def_at(net, p)->epilogue_silu && net->exact_output != p + 1 &&
           sole_reader(net, p, p + 1) && is_silu(net, p + 1);
}

/* A sum of two inputs right after p reads p (alone) and an output computed before p, in either
 * order (a projection block's shortcut comes last in PyTorch's graphs): p's forward pass writes
 * the sum (and its ReLU) into the sum's output. */
static int sum_fused(const clg_net *net, size_t p)
{
    if (p + 1 >= net->count || net->exact_output == p + 1 || !def_at(net, p)->epilogue_sum)
        return 0;
    const clg__layer *a = &net->layers[p + 1];
    if (!def_at(net, p + 1)->is_sum || a->nin != 2 || net->layers[p].nuse != 1)
        return 0;
    size_t other = a->from[0] == p ? a->from[1] : a->from[1] == p ? a->from[0] : p;
    return other == CLG_NET_INPUT || other < p;
}

/* The ReLU `relu` is read alone by the layer after it, which gives the ReLU input's gradient. */
static int relu_folded(const clg_net *net, size_t relu)
{
    return is_relu(net, relu) && sole_reader(net, relu, relu + 1) &&
           def_at(net, relu + 1)->folds_relu;
}

/* Layer i reads layer i - 1 as its first input (p: that producer). */
static int after_producer(const clg__layer *l, size_t i, size_t *p)
{
    *p = l->from[0];
    return *p != CLG_NET_INPUT && *p + 1 == i;
}

static void plan_fusions(const clg_net *net, size_t i, clg__layer_plan *pl)
{
    const clg__layer *l = &net->layers[i];
    const clg__layer_def *d = def_at(net, i);
    size_t p;
    int after = after_producer(l, i, &p);
    pl->relu_fused = (unsigned char)relu_fused(net, i);
    pl->relu_max = pl->relu_fused && !is_relu(net, i + 1) ? capped_relu(net, i + 1) : 0.0f;
    pl->relu_masked = pl->relu_fused && d->epilogue_relu == CLG__RELU_MASKED;
    pl->relu_applied = after && relu_fused(net, p);
    pl->silu_fused = (unsigned char)silu_fused(net, i);
    pl->silu_applied = after && silu_fused(net, p);
    pl->dx_given = relu_folded(net, i) ||
                   (pl->relu_applied && def_at(net, p)->epilogue_relu == CLG__RELU_MASKED);
    pl->sum_fused = (unsigned char)sum_fused(net, i);
    pl->sum_written = i > 0 && sum_fused(net, i - 1);
    pl->relu_input = after && relu_folded(net, p);
}

/* Training buffers, and the inference home: a view's is its input's (so is a ReLU's or SiLU's
 * that its producer applied), a layer that writes the sum after it lives in the sum's
 * buffer. */
static void plan_buffers(const clg_net *net, size_t i, clg__layer_plan *pl)
{
    const clg__layer *l = &net->layers[i];
    const clg__layer_def *d = def_at(net, i);
    pl->own_output = d->view != CLG__VIEW_ALWAYS;
    for (size_t k = 0; k < CLG_LAYER_INPUTS; k++)
        pl->own_dx[k] = k < l->nin && (!d->owns_input_grad || d->owns_input_grad(l, k));
    size_t p = l->from[0];
    if (d->view || pl->relu_applied || pl->silu_applied)
        pl->home = p == CLG_NET_INPUT ? CLG__PLAN_INPUT : net->layers[p].plan.home;
    else
        pl->home = pl->sum_fused ? i + 1 : i;
}

void clg__net_plan_update(clg_net *net)
{
    size_t tensors = 0, floats = 0, slices = 0;
    for (size_t i = 0; i < net->count; i++) {
        clg__layer *l = &net->layers[i];
        clg__layer_plan *pl = &l->plan;
        plan_fusions(net, i, pl);
        plan_buffers(net, i, pl);
        pl->param_first = tensors;
        pl->lo = floats;
        for (size_t k = 0; k < l->nparams; k++)
            floats += l->param[k] ? clg_tensor_numel(l->param[k]) : 0;
        pl->hi = floats;
        tensors += l->nparams;
        pl->slice = l->nparams ? slices++ : CLG__PLAN_INPUT;
    }
    net->param_layers = slices;
    net->param_tensors = tensors;
    net->param_floats = floats;
}

int clg__net_has_output(const clg_net *net)
{
    return net->count && def_at(net, net->count - 1)->output;
}
