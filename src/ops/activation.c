/* Elementwise activations and channel bias. */
#include <math.h>
#include <stdio.h>

#include "activation_internal.h"
#include "tensor/tensor_internal.h"
#include "clgrad/activation.h"


/* The settings' check shared by both passes: a known function, clip's bounds ordered. */
static clg_status desc_check(clg_ctx *ctx, const char *fn, const clg_activation_desc *a)
{
    if (!a)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: the activation must not be NULL", fn);
    if ((unsigned)a->f > CLG_ACT_SILU)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: unknown activation %d", fn, (int)a->f);
    if (a->f == CLG_ACT_CLIP && !(a->alpha <= a->beta))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: clip to [%g, %g], an empty range", fn,
                         (double)a->alpha, (double)a->beta);
    if (a->f == CLG_ACT_HARD_SIGMOID && !(isfinite(a->alpha) && isfinite(a->beta)))
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: hard sigmoid with alpha %g, beta %g",
                         fn, (double)a->alpha, (double)a->beta);
    return CLG_OK;
}

static clg_status launch(clg_ctx *ctx, const char *fn, const char *kernel,
                         const clg_activation_desc *a, const clg_tensor *const *t, int nt)
{
    clg_status st = clg__tensors_check(ctx, fn, t, nt);
    if (st == CLG_OK)
        st = clg__tensors_same_numel(ctx, fn, t, nt);
    if (st == CLG_OK)
        st = desc_check(ctx, fn, a);
    /* CPUs: 16 values a work-item, as vectors (POCL kept the per-value form of the functions
     * with exp scalar); GPUs: a value a work-item, neighbours reading neighbours */
    int cpu = st == CLG_OK && !clg_ctx_decides_as_gpu(ctx);
    /* a literal: the launch keeps the name (profiles read it after) */
    const char *name = !cpu ? kernel : nt == 2 ? "clg_act_fwd16" : "clg_act_bwd16";
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "activation", NULL, name, &l);
    if (st != CLG_OK)
        return st;
    size_t n = clg_tensor_numel(t[0]);
    for (int i = 0; i < nt; i++)
        clg__arg_tensor(&l, t[i]);
    clg__arg_u64(&l, n);
    clg__arg_u32(&l, a->f);
    clg__arg_f32(&l, a->alpha);
    clg__arg_f32(&l, a->beta);
    if (!cpu)
        return clg__launch_elementwise(&l, n);
    size_t items = (n + 15) / 16, group = items >= 64 ? 64 : 1; /* past n: nothing to do */
    size_t global[3] = {(items + group - 1) / group * group, 1, 1}, local[3] = {group, 1, 1};
    return clg__launch_run(&l, global, local);
}

clg_status clg_activation_forward_desc(clg_ctx *ctx, const clg_activation_desc *a,
                                       const clg_tensor *x, clg_tensor *y)
{
    const clg_tensor *t[2] = {x, y};
    return launch(ctx, "clg_activation_forward", "clg_act_fwd", a, t, 2);
}

clg_status clg_activation_backward_desc(clg_ctx *ctx, const clg_activation_desc *a,
                                        const clg_tensor *x, const clg_tensor *y,
                                        const clg_tensor *dy, clg_tensor *dx)
{
    const clg_tensor *t[4] = {x, y, dy, dx};
    return launch(ctx, "clg_activation_backward", "clg_act_bwd", a, t, 4);
}

/* The one-setting form: clip and hard sigmoid need both. */
static clg_status one_setting(clg_ctx *ctx, const char *fn, clg_activation f)
{
    if (f == CLG_ACT_CLIP || f == CLG_ACT_HARD_SIGMOID)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "%s: %s takes two settings (alpha and beta): "
                         "%s_desc", fn, f == CLG_ACT_CLIP ? "clip" : "hard sigmoid", fn);
    return CLG_OK;
}

clg_status clg_activation_forward(clg_ctx *ctx, clg_activation f, float alpha,
                                  const clg_tensor *x, clg_tensor *y)
{
    clg_activation_desc a = {f, alpha, 0.0f};
    clg_status st = one_setting(ctx, "clg_activation_forward", f);
    return st == CLG_OK ? clg_activation_forward_desc(ctx, &a, x, y) : st;
}

clg_status clg_activation_backward(clg_ctx *ctx, clg_activation f, float alpha,
                                   const clg_tensor *x, const clg_tensor *y, const clg_tensor *dy,
                                   clg_tensor *dx)
{
    clg_activation_desc a = {f, alpha, 0.0f};
    clg_status st = one_setting(ctx, "clg_activation_backward", f);
    return st == CLG_OK ? clg_activation_backward_desc(ctx, &a, x, y, dy, dx) : st;
}

/* b's values per element of a: 1 (same shape) or a's H x W (a gate); 0 when it is neither. */
static size_t gate_spread(const clg_tensor *a, const clg_tensor *b)
{
    clg_shape x = a->shape, g = b->shape;
    if (clg__shape_equal(x, g))
        return 1;
    return x.n == g.n && x.c == g.c && g.h == 1 && g.w == 1 ? x.h * x.w : 0;
}

static clg_status mul_check(clg_ctx *ctx, const char *fn, const clg_tensor *a, const clg_tensor *b,
                            size_t *hw)
{
    *hw = gate_spread(a, b);
    if (*hw)
        return CLG_OK;
    return clg__fail(ctx, CLG_ERR_SHAPE, "%s: b is %zux%zux%zux%zu, a %zux%zux%zux%zu (NxCxHxW): b "
                     "must be a's shape or %zux%zux1x1", fn, b->shape.n, b->shape.c, b->shape.h,
                     b->shape.w, a->shape.n, a->shape.c, a->shape.h, a->shape.w, a->shape.n,
                     a->shape.c);
}

static clg_status mul_launch(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b, size_t hw,
                             clg_tensor *y)
{
    clg__launch l;
    int cpu = !clg_ctx_decides_as_gpu(ctx); /* CPUs: 16-wide vectors (clg_mul16, _planes) */
    const char *name = !cpu ? "clg_mul" : hw == 1 ? "clg_mul16" : "clg_mul_planes";
    clg_status st = clg__launch_begin(ctx, "activation", NULL, name, &l);
    if (st != CLG_OK)
        return st;
    size_t n = clg_tensor_numel(a);
    clg__arg_tensor(&l, a);
    clg__arg_tensor(&l, b);
    clg__arg_tensor(&l, y);
    if (cpu && hw > 1) {
        size_t planes = n / hw, per = clg__runs_per_item(ctx, planes, hw, 2048);
        clg__arg_u32(&l, planes);
        clg__arg_u32(&l, per);
        clg__arg_u32(&l, hw);
        return clg__launch_runs(&l, planes, per);
    }
    clg__arg_u64(&l, n);
    if (cpu)
        return clg__launch_elementwise(&l, (n + 15) / 16);
    clg__arg_u32(&l, hw);
    return clg__launch_elementwise(&l, n);
}

clg_status clg_mul_forward(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b, clg_tensor *y)
{
    const clg_tensor *t[3] = {a, b, y}, *ay[2] = {a, y};
    size_t hw = 0;
    clg_status st = clg__tensors_check(ctx, "clg_mul_forward", t, 3);
    if (st == CLG_OK)
        st = clg__tensors_same_numel(ctx, "clg_mul_forward", ay, 2);
    if (st == CLG_OK)
        st = mul_check(ctx, "clg_mul_forward", a, b, &hw);
    return st == CLG_OK ? mul_launch(ctx, a, b, hw, y) : st;
}

clg_status clg_mul_backward(clg_ctx *ctx, const clg_tensor *a, const clg_tensor *b,
                            const clg_tensor *dy, clg_tensor *da, clg_tensor *db)
{
    const clg_tensor *t[3] = {a, b, dy}, *a_dy[2] = {a, dy};
    size_t hw = 0;
    clg_status st = clg__tensors_check(ctx, "clg_mul_backward", t, 3);
    if (st == CLG_OK)
        st = clg__tensors_same_numel(ctx, "clg_mul_backward", a_dy, 2);
    if (st == CLG_OK)
        st = mul_check(ctx, "clg_mul_backward", a, b, &hw);
    const clg_tensor *ga[2] = {a, da}, *gb[2] = {b, db};
    if (st == CLG_OK && da && (st = clg__tensors_check(ctx, "clg_mul_backward", &ga[1], 1)) == CLG_OK)
        st = clg__tensors_same_numel(ctx, "clg_mul_backward", ga, 2);
    if (st == CLG_OK && db && (st = clg__tensors_check(ctx, "clg_mul_backward", &gb[1], 1)) == CLG_OK)
        st = clg__tensors_same_numel(ctx, "clg_mul_backward", gb, 2);
    if (st == CLG_OK && db && hw == 1)
        st = mul_launch(ctx, dy, a, 1, db);
    if (st == CLG_OK && db && hw > 1) {
        clg__launch l;
        st = clg__launch_begin(ctx, "activation", NULL, "clg_mul_plane_grad", &l);
        if (st != CLG_OK)
            return st;
        size_t planes = clg_tensor_numel(b);
        clg__arg_tensor(&l, dy);
        clg__arg_tensor(&l, a);
        clg__arg_tensor(&l, db);
        clg__arg_u32(&l, planes);
        clg__arg_u32(&l, hw);
        size_t global[3] = {planes, 1, 1}, local[3] = {1, 1, 1};
        st = clg__launch_run(&l, global, local);
    }
    /* da last: it may be dy's own buffer, which db reads */
    if (st == CLG_OK && da)
        st = mul_launch(ctx, dy, b, hw, da);
    return st;
}

clg_status clg__channel_normalise(clg_ctx *ctx, clg_tensor *x, const clg_tensor *ms)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "activation", NULL, "clg_input_norm", &l);
    if (st != CLG_OK)
        return st;
    size_t n = clg_tensor_numel(x);
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, ms);
    clg__arg_u32(&l, x->shape.c);
    clg__arg_u32(&l, x->shape.h * x->shape.w);
    clg__arg_u64(&l, n);
    return clg__launch_elementwise(&l, n);
}

clg_status clg_bias_add(clg_ctx *ctx, const clg_tensor *bias, clg_tensor *y)
{
    const clg_tensor *t[2] = {bias, y};
    clg_status st = clg__tensors_check(ctx, "clg_bias_add", t, 2);
    if (st == CLG_OK && clg_tensor_numel(bias) != y->shape.c)
        st = clg__fail(ctx, CLG_ERR_SHAPE, "clg_bias_add: bias holds %zu values for %zu channels",
                       clg_tensor_numel(bias), y->shape.c);
    if (st != CLG_OK)
        return st;
    return clg__bias_add_relu(ctx, bias, y, 0);
}

clg_status clg__bias_add_relu(clg_ctx *ctx, const clg_tensor *bias, clg_tensor *y, int relu)
{
    size_t pq = y->shape.h * y->shape.w, c = y->shape.c;
    clg_status st;
    if (pq > 1 && !clg_ctx_decides_as_gpu(ctx)) { /* CPUs: whole planes as vectors */
        clg__launch l;
        st = clg__launch_begin(ctx, "activation", NULL, "clg_bias_relu_planes", &l);
        if (st != CLG_OK)
            return st;
        clg__arg_tensor(&l, y);
        clg__arg_tensor(&l, bias);
        clg__arg_u32(&l, c);
        clg__arg_u32(&l, pq);
        clg__arg_u32(&l, y->shape.n * c);
        clg__arg_u32(&l, (size_t)(relu != 0));
        size_t global[3] = {y->shape.n * c, 1, 1}, local[3] = {1, 1, 1};
        return clg__launch_run(&l, global, local);
    }
    clg__launch l; /* without pixels, one work-item per pixel would be one per work-group */
    st = clg__launch_begin(ctx, "activation", NULL, pq == 1 ? "clg_bias_add_rows" : "clg_bias_add", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, y);
    clg__arg_tensor(&l, bias);
    clg__arg_u32(&l, c);
    if (pq == 1) {
        clg__arg_u32(&l, y->shape.n);
        size_t global[3] = {c, y->shape.n, 1}, local[3] = {c >= 64 ? 64 : c >= 16 ? 16 : 1, 1, 1};
        st = clg__launch_run(&l, global, local);
        if (st == CLG_OK && relu)
            st = clg_activation_forward(ctx, CLG_ACT_RELU, 0.0f, y, y);
        return st;
    }
    clg__arg_u32(&l, pq);
    size_t global[3] = {pq, c, y->shape.n}, local[3] = {pq >= 32 ? 32 : 1, 1, 1};
    st = clg__launch_run(&l, global, local);
    if (st == CLG_OK && relu)
        st = clg_activation_forward(ctx, CLG_ACT_RELU, 0.0f, y, y);
    return st;
}

enum { BIAS_GROUP = 256 }; /* BIAS_LOCAL in activation.cl */

clg_status clg_bias_backward(clg_ctx *ctx, const clg_tensor *dy, clg_tensor *db)
{
    const clg_tensor *t[2] = {dy, db};
    clg_status st = clg__tensors_check(ctx, "clg_bias_backward", t, 2);
    if (st == CLG_OK && clg_tensor_numel(db) != dy->shape.c)
        st = clg__fail(ctx, CLG_ERR_SHAPE, "clg_bias_backward: db holds %zu values, dy has %zu channels",
                       clg_tensor_numel(db), dy->shape.c);
    clg__launch l;
    int gpu = clg_ctx_decides_as_gpu(ctx); /* GPUs: a work-group per channel; CPUs: an item */
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "activation", NULL, gpu ? "clg_bias_grad_group" : "clg_bias_grad", &l);
    if (st != CLG_OK)
        return st;
    clg_shape s = dy->shape;
    clg__arg_tensor(&l, dy);
    clg__arg_u32(&l, s.n);
    clg__arg_u32(&l, s.c);
    clg__arg_u32(&l, s.h * s.w);
    clg__arg_tensor(&l, db);
    size_t group = gpu ? BIAS_GROUP : 1;
    size_t global[3] = {s.c * group, 1, 1}, local[3] = {group, 1, 1};
    return clg__launch_run(&l, global, local);
}
