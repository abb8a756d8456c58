/* Parameter initialisation on the host from a seed (the same numbers on every device). */
#include <math.h>
#include <stdlib.h>

#include "nn/layer_table.h"

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1), never 0 (for the logarithm of Box-Muller). */
static double uniform(uint64_t *s)
{
    return ((double)(splitmix64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Whether the layer's output goes through a ReLU-family activation (batch norm, dropout or
 * pooling or a residual sum in between allowed, each the next layer and reading the one
 * before; a sum with its ReLU counts): He initialisation then keeps the activations'
 * variance. */
static int feeds_relu(const clg_net *net, size_t i)
{
    for (size_t j = i + 1; j < net->count && net->layers[j].from[0] == j - 1; j++) {
        const clg__layer *l = &net->layers[j];
        const clg__layer_def *def = clg__layer_def_of(l->kind);
        if (def->relu_family && def->relu_family(l))
            return 1;
        if (!def->init_transparent)
            return 0;
    }
    return 0;
}

clg_status clg__layer_init_weights(clg_net *net, size_t i, uint64_t seed)
{
    clg__layer *l = &net->layers[i];
    size_t n = clg_tensor_numel(l->param[0]);
    clg_shape s = clg_tensor_shape(l->param[0]);
    double fan_in = (double)(s.c * s.h * s.w), fan_out = (double)(s.n * s.h * s.w);
    float *w = clg__malloc(n * sizeof *w);
    if (!w)
        return clg__oom(net->ctx, "clg_net_init");
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (i + 1));
    if (feeds_relu(net, i)) {
        double sd = sqrt(2.0 / fan_in);
        for (size_t k = 0; k < n; k += 2) { /* Box-Muller gives two normals per draw */
            double r = sqrt(-2.0 * log(uniform(&state))), t = 6.283185307179586 * uniform(&state);
            w[k] = (float)(sd * r * cos(t));
            if (k + 1 < n)
                w[k + 1] = (float)(sd * r * sin(t));
        }
    } else {
        double limit = sqrt(6.0 / (fan_in + fan_out));
        for (size_t k = 0; k < n; k++)
            w[k] = (float)(limit * (2.0 * uniform(&state) - 1.0));
    }
    clg_status st = clg_tensor_upload(l->param[0], w, n);
    free(w);
    if (st == CLG_OK && l->nparams > 1)
        st = clg_tensor_fill(l->param[1], 0.0f);
    return st;
}

clg_status clg_net_init(clg_net *net, uint64_t seed)
{
    if (!net)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_net_init: net must not be NULL");
    uint64_t s = seed;
    net->dropout_seed = splitmix64(&s);
    clg_status st = CLG_OK;
    for (size_t i = 0; st == CLG_OK && i < net->count; i++) {
        const clg__layer_def *def = clg__layer_def_of(net->layers[i].kind);
        if (def->init)
            st = def->init(net, i, seed);
    }
    return st;
}
