/* SGD (momentum, Nesterov, weight decay) and Adam / AdamW, on device tensors and host arrays,
 * with the same operation order in both. */
#include <math.h>
#include <string.h>
#include "tensor/tensor_internal.h"
#include "clgrad/optim.h"
#include "ops/optim_internal.h"

/* The caller's params over the defaults in *full (size bytes), as far as its struct_size
 * reaches: NULL, or why they cannot be read. */
static const char *read_params(void *full, const void *given, size_t size)
{
    size_t n;
    if (!given)
        return "params is NULL";
    memcpy(&n, given, sizeof n);
    if (n < sizeof n || n > size)
        return "struct_size is not one this library knows (start from the params' _default())";
    memcpy(full, given, n);
    memcpy(full, &size, sizeof size);
    return NULL;
}

static const char *check_sgd(const clg_sgd_params *p)
{
    if (!p)
        return "params is NULL";
    if (!(p->lr >= 0) || !(p->momentum >= 0 && p->momentum < 1) || !(p->weight_decay >= 0))
        return "lr and weight_decay must be >= 0 and momentum in [0, 1)";
    if (p->nesterov && p->momentum == 0)
        return "Nesterov needs momentum > 0";
    return NULL;
}

clg_sgd_params clg_sgd_params_default(void)
{
    clg_sgd_params p = {sizeof p, 0.01f, 0.0f, 0.0f, 0};
    return p;
}

clg_adam_params clg_adam_params_default(void)
{
    clg_adam_params p = {sizeof p, 0.001f, 0.9f, 0.999f, 1e-8f, 0.0f, 0, 1};
    return p;
}

clg_rmsprop_params clg_rmsprop_params_default(void)
{
    clg_rmsprop_params p = {sizeof p, 0.001f, 0.9f, 1e-8f, 0.0f};
    return p;
}

static const char *check_adam(const clg_adam_params *p)
{
    if (!p)
        return "params is NULL";
    if (!(p->lr >= 0) || !(p->beta1 >= 0 && p->beta1 < 1) || !(p->beta2 >= 0 && p->beta2 < 1) ||
        !(p->eps > 0) || !(p->weight_decay >= 0))
        return "lr, weight_decay >= 0, betas in [0, 1), eps > 0 expected";
    if (p->step < 1)
        return "step must be >= 1";
    return NULL;
}

static const char *check_rmsprop(const clg_rmsprop_params *p)
{
    if (!p)
        return "params is NULL";
    if (!(p->lr >= 0) || !(p->alpha >= 0 && p->alpha < 1) || !(p->eps > 0) ||
        !(p->weight_decay >= 0))
        return "lr, weight_decay >= 0, alpha in [0, 1), eps > 0 expected";
    return NULL;
}

static clg_status same(clg_ctx *ctx, const char *call, const clg_tensor *const *t, size_t n)
{
    clg_status st = clg__tensors_check(ctx, call, t, n);
    return st == CLG_OK ? clg__tensors_same_numel(ctx, call, t, n) : st;
}

clg_status clg_sgd_step(clg_ctx *ctx, const clg_sgd_params *given, clg_tensor *w, const clg_tensor *g,
                        clg_tensor *v)
{
    clg_sgd_params q = clg_sgd_params_default();
    const char *unread = read_params(&q, given, sizeof q);
    const clg_sgd_params *p = unread ? NULL : &q;
    const clg_tensor *t[3] = {w, g, v};
    clg_status st = same(ctx, "clg_sgd_step", t, 3);
    const char *bad = st == CLG_OK ? (unread ? unread : check_sgd(p)) : NULL;
    if (bad)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_sgd_step: %s", bad);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "optim", NULL, "clg_sgd", &l);
    if (st != CLG_OK)
        return st;
    size_t n = clg_tensor_numel(w);
    clg__arg_tensor(&l, w);
    clg__arg_tensor(&l, g);
    clg__arg_tensor(&l, v);
    clg__arg_u64(&l, n);
    clg__arg_f32(&l, p->lr);
    clg__arg_f32(&l, p->momentum);
    clg__arg_f32(&l, p->weight_decay);
    clg__arg_u32(&l, (size_t)(p->nesterov != 0));
    size_t global[3] = {n, 1, 1}, local[3] = {64, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* Bias corrections 1 - beta^t, in float as the device gets them. */
static void corrections(const clg_adam_params *p, float *c1, float *c2)
{
    *c1 = 1.0f - powf(p->beta1, (float)p->step);
    *c2 = 1.0f - powf(p->beta2, (float)p->step);
}

clg_status clg_adam_step(clg_ctx *ctx, const clg_adam_params *given, clg_tensor *w, const clg_tensor *g,
                         clg_tensor *m, clg_tensor *v)
{
    clg_adam_params q = clg_adam_params_default();
    const char *unread = read_params(&q, given, sizeof q);
    const clg_adam_params *p = unread ? NULL : &q;
    const clg_tensor *t[4] = {w, g, m, v};
    clg_status st = same(ctx, "clg_adam_step", t, 4);
    const char *bad = st == CLG_OK ? (unread ? unread : check_adam(p)) : NULL;
    if (bad)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_adam_step: %s", bad);
    clg__launch l;
    int per_item = clg_ctx_decides_as_gpu(ctx) ? 1 : 16; /* GPUs: neighbours read neighbours */
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "optim", NULL, per_item == 1 ? "clg_adam" : "clg_adam16", &l);
    if (st != CLG_OK)
        return st;
    float c1, c2;
    corrections(p, &c1, &c2);
    size_t n = clg_tensor_numel(w);
    for (int i = 0; i < 4; i++)
        clg__arg_tensor(&l, t[i]);
    clg__arg_u64(&l, n);
    clg__arg_f32(&l, p->lr);
    clg__arg_f32(&l, p->beta1);
    clg__arg_f32(&l, p->beta2);
    clg__arg_f32(&l, p->eps);
    clg__arg_f32(&l, p->weight_decay);
    clg__arg_u32(&l, (size_t)(p->decoupled != 0));
    clg__arg_f32(&l, c1);
    clg__arg_f32(&l, c2);
    size_t global[3] = {(n + (size_t)per_item - 1) / (size_t)per_item, 1, 1}, local[3] = {64, 1, 1};
    return clg__launch_run(&l, global, local);
}

/* The host loops, on scalars (stores through a pointer to the settings would stop
 * vectorisation) and arrays that do not overlap. Each reads its gradient as
 * (acc[i] + last[i]) * inv, or last[i] * inv without acc: the device group's shards summed
 * as they are read, in device order (one pass over memory instead of two); the public calls
 * pass inv = 1, which changes no bit. The compiler unswitches each loop on acc. */
static inline float grad_at(const float *restrict acc, const float *restrict last, float inv,
                            size_t i)
{
    return (acc ? acc[i] + last[i] : last[i]) * inv;
}

CLG__VECTOR_CLONES
static void sgd_host(float lr, float mom, float wd, int nesterov, float *restrict w,
                     const float *restrict acc, const float *restrict last, float inv,
                     float *restrict v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float wi = w[i], d = grad_at(acc, last, inv, i) + wd * wi;
        float vi = mom * v[i] + d;
        v[i] = vi;
        w[i] = wi - lr * (nesterov ? d + mom * vi : vi);
    }
}

CLG__VECTOR_CLONES
static void adam_host(float lr, float b1, float b2, float eps, float wd_w, float wd_g, float c1,
                      float c2, float *restrict w, const float *restrict acc,
                      const float *restrict last, float inv, float *restrict m,
                      float *restrict v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float wi = w[i], gi = grad_at(acc, last, inv, i);
        wi -= lr * wd_w * wi; /* AdamW's decay (0 for Adam) */
        gi += wd_g * wi;      /* Adam's L2 term (0 for AdamW) */
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] = wi - lr * (mi / c1) / (sqrtf(vi / c2) + eps);
    }
}

CLG__VECTOR_CLONES
static void rmsprop_host(float lr, float alpha, float eps, float wd, float *restrict w,
                         const float *restrict acc, const float *restrict last, float inv,
                         float *restrict v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float wi = w[i], gi = grad_at(acc, last, inv, i) + wd * wi;
        float vi = alpha * v[i] + (1.0f - alpha) * gi * gi;
        v[i] = vi;
        w[i] = wi - lr * gi / (sqrtf(vi) + eps);
    }
}

/* The settings' fault, else a missing array's. */
static const char *host_check(const char *bad, const void *w, const clg__grad_sum *g,
                              const void *v)
{
    return bad ? bad : !w || !g || !g->last || !v ? "NULL array" : NULL;
}

clg_status clg__sgd_step_host_sum(const clg_sgd_params *given, float *w, const clg__grad_sum *g,
                                  float *v, size_t n)
{
    clg_sgd_params q = clg_sgd_params_default();
    const char *unread = read_params(&q, given, sizeof q);
    const clg_sgd_params *p = unread ? NULL : &q;
    const char *bad = host_check((unread ? unread : check_sgd(p)), w, g, v);
    if (bad)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_sgd_step_host: %s", bad);
    sgd_host(p->lr, p->momentum, p->weight_decay, p->nesterov, w, g->acc, g->last, g->inv, v, n);
    return CLG_OK;
}

clg_status clg__adam_step_host_sum(const clg_adam_params *given, float *w, const clg__grad_sum *g,
                                   float *m, float *v, size_t n)
{
    clg_adam_params q = clg_adam_params_default();
    const char *unread = read_params(&q, given, sizeof q);
    const clg_adam_params *p = unread ? NULL : &q;
    const char *bad = host_check((unread ? unread : check_adam(p)), w, g, m ? v : NULL);
    if (bad)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_adam_step_host: %s", bad);
    float c1, c2;
    corrections(p, &c1, &c2);
    const float wd_w = p->decoupled ? p->weight_decay : 0.0f, wd_g = p->decoupled ? 0.0f : p->weight_decay;
    adam_host(p->lr, p->beta1, p->beta2, p->eps, wd_w, wd_g, c1, c2, w, g->acc, g->last, g->inv, m,
              v, n);
    return CLG_OK;
}

clg_status clg__rmsprop_step_host_sum(const clg_rmsprop_params *given, float *w,
                                      const clg__grad_sum *g, float *v, size_t n)
{
    clg_rmsprop_params q = clg_rmsprop_params_default();
    const char *unread = read_params(&q, given, sizeof q);
    const clg_rmsprop_params *p = unread ? NULL : &q;
    const char *bad = host_check((unread ? unread : check_rmsprop(p)), w, g, v);
    if (bad)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_rmsprop_step_host: %s", bad);
    rmsprop_host(p->lr, p->alpha, p->eps, p->weight_decay, w, g->acc, g->last, g->inv, v, n);
    return CLG_OK;
}

clg_status clg_sgd_step_host(const clg_sgd_params *p, float *w, const float *g, float *v, size_t n)
{
    return clg__sgd_step_host_sum(p, w, &(clg__grad_sum){NULL, g, 1.0f}, v, n);
}

clg_status clg_adam_step_host(const clg_adam_params *p, float *w, const float *g, float *m,
                              float *v, size_t n)
{
    return clg__adam_step_host_sum(p, w, &(clg__grad_sum){NULL, g, 1.0f}, m, v, n);
}

clg_status clg_rmsprop_step_host(const clg_rmsprop_params *p, float *w, const float *g, float *v,
                                 size_t n)
{
    return clg__rmsprop_step_host_sum(p, w, &(clg__grad_sum){NULL, g, 1.0f}, v, n);
}

clg_status clg_rmsprop_step(clg_ctx *ctx, const clg_rmsprop_params *given, clg_tensor *w,
                            const clg_tensor *g, clg_tensor *v)
{
    clg_rmsprop_params q = clg_rmsprop_params_default();
    const char *unread = read_params(&q, given, sizeof q);
    const clg_rmsprop_params *p = unread ? NULL : &q;
    const clg_tensor *t[3] = {w, g, v};
    clg_status st = same(ctx, "clg_rmsprop_step", t, 3);
    const char *bad = st == CLG_OK ? (unread ? unread : check_rmsprop(p)) : NULL;
    if (bad)
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_rmsprop_step: %s", bad);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "optim", NULL, "clg_rmsprop", &l);
    if (st != CLG_OK)
        return st;
    size_t n = clg_tensor_numel(w);
    for (int i = 0; i < 3; i++)
        clg__arg_tensor(&l, t[i]);
    clg__arg_u64(&l, n);
    clg__arg_f32(&l, p->lr);
    clg__arg_f32(&l, p->alpha);
    clg__arg_f32(&l, p->eps);
    clg__arg_f32(&l, p->weight_decay);
    size_t global[3] = {n, 1, 1}, local[3] = {64, 1, 1};
    return clg__launch_run(&l, global, local);
}

