/* Batch normalisation: per-channel reductions, then elementwise kernels. */
#include <stdio.h>
#include "ops/norm_internal.h"
#include "clgrad/norm.h"

static clg_status check(clg_ctx *ctx, const char *call, const clg_tensor *x,
                        const clg_tensor *const *ch, int n_ch, const clg_tensor *const *full,
                        int n_full)
{
    clg_status st = clg__tensors_check(ctx, call, &x, 1);
    if (st == CLG_OK)
        st = clg__tensors_check(ctx, call, ch, (size_t)n_ch);
    if (st == CLG_OK)
        st = clg__tensors_check(ctx, call, full, (size_t)n_full);
    for (int i = 0; i < n_ch && st == CLG_OK; i++)
        if (clg_tensor_numel(ch[i]) != x->shape.c)
            st = clg__fail(ctx, CLG_ERR_SHAPE, "%s: per-channel argument %d holds %zu values for %zu channels",
                           call, i + 1, clg_tensor_numel(ch[i]), x->shape.c);
    for (int i = 0; i < n_full && st == CLG_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "tensor argument %d", i + 1);
        st = clg__tensor_expect_shape(ctx, call, name, full[i], x->shape);
    }
    return st;
}

/* The elementwise kernels' launch: on a GPU a work-group per (n, c) plane (at most 65535 of
 * them along dimension 1: the kernels loop past it), on a CPU a work-item per plane, NC
 * passed last. */
static clg_status run_per_plane(clg__launch *l, size_t NC, int cpu)
{
    clg__arg_u32(l, NC);
    size_t round = (NC + CLG__BN_PLANES_LOCAL - 1) / CLG__BN_PLANES_LOCAL * CLG__BN_PLANES_LOCAL;
    size_t global[3] = {cpu ? round : CLG__BN_LOCAL, cpu ? 1 : clg__grid_groups(NC), 1};
    size_t local[3] = {cpu ? CLG__BN_PLANES_LOCAL : CLG__BN_LOCAL, 1, 1};
    return clg__launch_run(l, global, local);
}

/* The per-channel reductions' launch: on a GPU a work-group of CLG__BN_LOCAL items per
 * channel, on a CPU a work-item per channel. */
static clg_status run_per_channel(clg__launch *l, size_t C, int cpu)
{
    size_t global[3] = {cpu ? C : C * CLG__BN_LOCAL, 1, 1};
    size_t local[3] = {cpu ? 1 : CLG__BN_LOCAL, 1, 1};
    return clg__launch_run(l, global, local);
}

static clg_status apply(clg_ctx *ctx, const clg_tensor *x, clg_tensor *y, const clg_tensor *gamma,
                        const clg_tensor *beta, const clg_tensor *mean, const clg_tensor *scale,
                        int infer, float eps, const clg_tensor *residual, int relu)
{
    int cpu = !clg_ctx_decides_as_gpu(ctx);
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "batchnorm", CLG__BN_OPTIONS,
                                      cpu ? "clg_bn_apply_planes" : "clg_bn_apply", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, y);
    clg__arg_tensor(&l, gamma);
    clg__arg_tensor(&l, beta);
    clg__arg_tensor(&l, mean);
    clg__arg_tensor(&l, scale);
    clg__arg_u32(&l, x->shape.c);
    clg__arg_u32(&l, x->shape.h * x->shape.w);
    clg__arg_u32(&l, (size_t)infer);
    clg__arg_f32(&l, eps);
    clg__arg_tensor(&l, residual ? residual : x); /* read only with residual */
    clg__arg_u32(&l, residual != NULL);
    clg__arg_u32(&l, relu != 0);
    return run_per_plane(&l, x->shape.n * x->shape.c, cpu);
}

clg_status clg_batchnorm_forward_train(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *gamma,
                                       const clg_tensor *beta, float momentum, float eps,
                                       clg_tensor *running_mean, clg_tensor *running_var,
                                       clg_tensor *save_mean, clg_tensor *save_invstd, clg_tensor *y)
{
    return clg__batchnorm_train_sum(ctx, x, gamma, beta, momentum, eps, running_mean,
                                    running_var, save_mean, save_invstd, NULL, 0, y);
}

clg_status clg__batchnorm_train_sum(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *gamma,
                                    const clg_tensor *beta, float momentum, float eps,
                                    clg_tensor *running_mean, clg_tensor *running_var,
                                    clg_tensor *save_mean, clg_tensor *save_invstd,
                                    const clg_tensor *residual, int relu, clg_tensor *y)
{
    const clg_tensor *ch[6] = {gamma, beta, save_mean, save_invstd, running_mean, running_var};
    const clg_tensor *full[1] = {y};
    int running = running_mean && running_var;
    clg_status st = check(ctx, "clg_batchnorm_forward_train", x, ch, running ? 6 : 4, full, 1);
    if (st == CLG_OK && (!(eps > 0.0f) || !(momentum >= 0.0f && momentum <= 1.0f)))
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_batchnorm_forward_train: eps must be > 0 and momentum in [0, 1]");
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "batchnorm", CLG__BN_OPTIONS,
                               clg_ctx_decides_as_gpu(ctx) ? "clg_bn_stats" : "clg_bn_stats_planes",
                               &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_u32(&l, x->shape.n);
    clg__arg_u32(&l, x->shape.c);
    clg__arg_u32(&l, x->shape.h * x->shape.w);
    clg__arg_f32(&l, eps);
    clg__arg_f32(&l, momentum);
    clg__arg_u32(&l, (size_t)running);
    clg__arg_tensor(&l, running ? running_mean : save_mean); /* unused without running statistics */
    clg__arg_tensor(&l, running ? running_var : save_invstd);
    clg__arg_tensor(&l, save_mean);
    clg__arg_tensor(&l, save_invstd);
    st = run_per_channel(&l, x->shape.c, !clg_ctx_decides_as_gpu(ctx));
    if (st == CLG_OK)
        st = apply(ctx, x, y, gamma, beta, save_mean, save_invstd, 0, eps, residual, relu);
    return st;
}

clg_status clg_batchnorm_forward_infer(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *gamma,
                                       const clg_tensor *beta, const clg_tensor *running_mean,
                                       const clg_tensor *running_var, float eps, clg_tensor *y)
{
    return clg__batchnorm_infer_sum(ctx, x, gamma, beta, running_mean, running_var, eps, NULL, 0,
                                    y);
}

clg_status clg__batchnorm_infer_sum(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *gamma,
                                    const clg_tensor *beta, const clg_tensor *running_mean,
                                    const clg_tensor *running_var, float eps,
                                    const clg_tensor *residual, int relu, clg_tensor *y)
{
    const clg_tensor *ch[4] = {gamma, beta, running_mean, running_var};
    const clg_tensor *full[1] = {y};
    clg_status st = check(ctx, "clg_batchnorm_forward_infer", x, ch, 4, full, 1);
    if (st == CLG_OK && !(eps > 0.0f))
        st = clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_batchnorm_forward_infer: eps must be > 0");
    if (st == CLG_OK)
        st = apply(ctx, x, y, gamma, beta, running_mean, running_var, 1, eps, residual, relu);
    return st;
}

clg_status clg_batchnorm_backward(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *dy,
                                  const clg_tensor *gamma, const clg_tensor *save_mean,
                                  const clg_tensor *save_invstd, clg_tensor *dx,
                                  clg_tensor *dgamma, clg_tensor *dbeta)
{
    return clg__batchnorm_backward_relu(ctx, x, dy, NULL, gamma, save_mean, save_invstd, dx,
                                        dgamma, dbeta);
}

/* [CPU form][ReLU fused] (cl_kernels/batchnorm.cl) */
static const char *const reduce_names[2][2] = {
    {"clg_bn_bwd_reduce", "clg_bn_bwd_reduce_relu"},
    {"clg_bn_bwd_reduce_planes", "clg_bn_bwd_reduce_relu_planes"}};
static const char *const dx_names[2][2] = {{"clg_bn_bwd_dx", "clg_bn_bwd_dx_relu"},
                                           {"clg_bn_bwd_dx_planes", "clg_bn_bwd_dx_relu_planes"}};

clg_status clg__batchnorm_backward_relu(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *dy,
                                        const clg_tensor *relu_beta, const clg_tensor *gamma,
                                        const clg_tensor *save_mean,
                                        const clg_tensor *save_invstd, clg_tensor *dx,
                                        clg_tensor *dgamma, clg_tensor *dbeta)
{
    const clg_tensor *beta = relu_beta ? relu_beta : gamma; /* read only for the mask */
    const clg_tensor *ch[6] = {gamma, save_mean, save_invstd, dgamma, dbeta, beta};
    const clg_tensor *full[2] = {dy, dx};
    clg_status st = check(ctx, "clg_batchnorm_backward", x, ch, 6, full, 2);
    clg__launch l;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "batchnorm", CLG__BN_OPTIONS,
                               reduce_names[!clg_ctx_decides_as_gpu(ctx)][relu_beta != NULL], &l);
    if (st != CLG_OK)
        return st;
    size_t N = x->shape.n, C = x->shape.c, HW = x->shape.h * x->shape.w;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, gamma);
    clg__arg_tensor(&l, beta);
    clg__arg_tensor(&l, save_mean);
    clg__arg_tensor(&l, save_invstd);
    clg__arg_u32(&l, N);
    clg__arg_u32(&l, C);
    clg__arg_u32(&l, HW);
    clg__arg_tensor(&l, dgamma);
    clg__arg_tensor(&l, dbeta);
    st = run_per_channel(&l, C, !clg_ctx_decides_as_gpu(ctx));
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "batchnorm", CLG__BN_OPTIONS,
                               dx_names[!clg_ctx_decides_as_gpu(ctx)][relu_beta != NULL], &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, x);
    clg__arg_tensor(&l, dy);
    clg__arg_tensor(&l, gamma);
    clg__arg_tensor(&l, beta);
    clg__arg_tensor(&l, save_mean);
    clg__arg_tensor(&l, save_invstd);
    clg__arg_tensor(&l, dgamma);
    clg__arg_tensor(&l, dbeta);
    clg__arg_u32(&l, N);
    clg__arg_u32(&l, C);
    clg__arg_u32(&l, HW);
    clg__arg_tensor(&l, dx);
    return run_per_plane(&l, N * C, !clg_ctx_decides_as_gpu(ctx));
}
