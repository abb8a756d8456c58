/* Batch normalisation per channel, NCHW: statistics over n, h, w (M = N * HW values a
 * channel) as a mean and a sum of squared deviations from it (two passes over the channel on
 * GPUs, over each plane on CPUs), all in a fixed order, so results are deterministic and the
 * variance never goes negative.
 *
 * Two forms of each kernel, the host picks by device (src/ops/batchnorm.c):
 * - GPU: a work-group of BN_LOCAL work-items per channel (reductions) or per (n, c) plane
 *   (elementwise), neighbouring items reading neighbouring floats (coalesced), reductions
 *   finished by a tree in local memory.
 * - CPU (_planes): a work-item runs along whole planes with explicit 16-wide vectors. POCL
 *   vectorises across work-items only where no loop runs inside one, so the GPU form's
 *   strided loops ran one float at a time (about 9 GB/s).
 *
 * A ReLU after the batch norm may be fused: the forward pass writes max(y, 0) and the backward
 * pass recomputes its mask from x (g = dy where gamma * xhat + beta > 0, else 0), with the
 * forward pass's very operations, so the mask is the one the output got; reading x, which it
 * reads anyway, instead of the output spares a third of the backward pass's reads. */
#ifndef BN_LOCAL
#define BN_LOCAL 64 /* the host passes its own (src/ops/norm_internal.h) */
#endif

/* The gradient reaching the batch norm: dy d, or with a fused ReLU d where the output
 * fma(a, x - mu, b) > 0 (a = gamma * invstd, b = beta: clg_bn_apply's expression, so the
 * same mask). masked is a constant in each kernel (a select): a runtime flag left POCL's
 * loops scalar, 3x slower. */
inline float bn_grad(float d, float xv, float a, float mu, float b, const int masked)
{
    return masked ? (fma(a, xv - mu, b) > 0.0f ? d : 0.0f) : d;
}

inline float16 bn_grad16(float16 d, float16 xv, float a, float mu, float b, const int masked)
{
    return masked ? select((float16)(0.0f), d,
                           isgreater(fma((float16)(a), xv - mu, (float16)(b)), (float16)(0.0f)))
                  : d;
}

/* Channel c's mean and 1 / sqrt(var + eps) from the sum of squared deviations sq, stored
 * with the running statistics' update (unbiased variance). */
inline void bn_stats_store(uint c, float mu, float sq, float M, float eps, float momentum,
                           uint has_running, __global float *rmean, ulong rm_off,
                           __global float *rvar, ulong rv_off, __global float *mean,
                           ulong m_off, __global float *invstd, ulong i_off)
{
    float var = sq / M;
    mean[m_off + c] = mu;
    invstd[i_off + c] = 1.0f / sqrt(var + eps);
    if (has_running) {
        float unbiased = M > 1.0f ? sq / (M - 1.0f) : var;
        rmean[rm_off + c] = (1.0f - momentum) * rmean[rm_off + c] + momentum * mu;
        rvar[rv_off + c] = (1.0f - momentum) * rvar[rv_off + c] + momentum * unbiased;
    }
}

#define BN_STATS_ARGS                                                                         \
    __global const float *x, ulong x_off, uint N, uint C, uint HW, float eps, float momentum, \
        uint has_running, __global float *rmean, ulong rm_off, __global float *rvar,           \
        ulong rv_off, __global float *mean, ulong m_off, __global float *invstd, ulong i_off
#define BN_STATS_STORE(mu, sq)                                                                \
    bn_stats_store(c, mu, sq, (float)N * (float)HW, eps, momentum, has_running, rmean,        \
                   rm_off, rvar, rv_off, mean, m_off, invstd, i_off)

/* GPU form: items stride over the pixels of every image of channel c (a work-group). */
__kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
void clg_bn_stats(BN_STATS_ARGS)
{
    __local float acc[BN_LOCAL];
    uint c = get_group_id(0), j = get_local_id(0);
    float part = clg_channel_share(x + x_off, N, C, HW, c, j, BN_LOCAL);
    float mu = clg_group_sum(acc, j, BN_LOCAL, part) / ((float)N * (float)HW);
    part = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + x_off + ((size_t)n * C + c) * HW;
        for (uint i = j; i < HW; i += BN_LOCAL) {
            float d = xc[i] - mu;
            part = fma(d, d, part);
        }
    }
    float sq = clg_group_sum(acc, j, BN_LOCAL, part);
    if (j == 0)
        BN_STATS_STORE(mu, sq);
}

/* Sum over a plane of (p - mu), or of its squares. */
inline float bn_plane_sum(const __global float *p, uint HW, float mu, const int squares)
{
    float16 a = (float16)(0.0f), b = (float16)(0.0f);
    uint i = 0;
    for (; i + 32 <= HW; i += 32) {
        float16 d0 = vload16(0, p + i) - mu, d1 = vload16(0, p + i + 16) - mu;
        a = squares ? fma(d0, d0, a) : a + d0;
        b = squares ? fma(d1, d1, b) : b + d1;
    }
    if (i + 16 <= HW) {
        float16 d = vload16(0, p + i) - mu;
        a = squares ? fma(d, d, a) : a + d;
        i += 16;
    }
    float t = 0.0f;
    for (; i < HW; i++) {
        float d = p[i] - mu;
        t = squares ? fma(d, d, t) : t + d;
    }
    return clg_hsum16(a + b) + t;
}

/* CPU form: a work-item per channel runs through its N planes: each plane's sum from memory,
 * then its squared deviations from its own mean while it is in L1, merged into the channel's
 * by Chan et al.'s pairwise update (the between-planes term delta^2 * na * nb / (na + nb)):
 * one read of x, no barriers (a work-group of BN_LOCAL items per channel spent most of its
 * time in the tree's barriers on planes of 7x7). */
__kernel void clg_bn_stats_planes(BN_STATS_ARGS)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    float na = 0.0f, mu = 0.0f, sq = 0.0f, nb = (float)HW;
    for (uint n = 0; n < N; n++) {
        const __global float *p = x + x_off + ((size_t)n * C + c) * HW;
        float mb = bn_plane_sum(p, HW, 0.0f, 0) / nb;
        float qb = bn_plane_sum(p, HW, mb, 1), delta = mb - mu, total = na + nb;
        mu += delta * (nb / total);
        sq += qb + delta * delta * (na * nb / total);
        na = total;
    }
    BN_STATS_STORE(mu, sq);
}

/* y = gamma * (x - mean) * invstd + beta, then (a residual sum fused in) + r and max(., 0)
 * when relu; with infer = 1, invstd is computed from a variance (the running one) as
 * 1 / sqrt(var + eps). */
#define BN_APPLY_ARGS                                                                         \
    __global const float *x, ulong x_off, __global float *y, ulong y_off,                     \
        __global const float *gamma, ulong g_off, __global const float *beta, ulong b_off,    \
        __global const float *mean, ulong m_off, __global const float *scale, ulong s_off,    \
        uint C, uint HW, uint infer, float eps, __global const float *r, ulong r_off,          \
        uint residual, uint relu
#define BN_APPLY_COEFFICIENTS(c)                                                              \
    float is = infer ? 1.0f / sqrt(scale[s_off + c] + eps) : scale[s_off + c];               \
    float a = gamma[g_off + c] * is, mu = mean[m_off + c], b = beta[b_off + c]

/* GPU form: a work-group per (n, c) plane, its items striding over the plane's pixels; the
 * groups loop over planes past the grid (at most 65535 groups along dimension 1). */
__kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
void clg_bn_apply(BN_APPLY_ARGS, uint NC)
{
    uint j = get_local_id(0);
    for (uint nc = get_group_id(1); nc < NC; nc += get_num_groups(1)) {
        uint c = nc % C;
        BN_APPLY_COEFFICIENTS(c);
        size_t at = (size_t)nc * HW;
        for (uint i = j; i < HW; i += BN_LOCAL) {
            float v = fma(a, x[x_off + at + i] - mu, b);
            if (residual)
                v += r[r_off + at + i];
            y[y_off + at + i] = relu ? fmax(v, 0.0f) : v;
        }
    }
}

/* CPU form: a work-item per (n, c) plane (dimension 0). */
__kernel void clg_bn_apply_planes(BN_APPLY_ARGS, uint NC)
{
    uint nc = get_global_id(0), c = nc % C;
    if (nc >= NC)
        return;
    BN_APPLY_COEFFICIENTS(c);
    size_t at = (size_t)nc * HW;
    const __global float *xp = x + x_off + at, *rp = r + r_off + at;
    __global float *yp = y + y_off + at;
    uint i = 0;
    for (; i + 16 <= HW; i += 16) {
        float16 v = fma((float16)(a), vload16(0, xp + i) - mu, (float16)(b));
        if (residual)
            v += vload16(0, rp + i);
        CLG_STORE16(relu ? fmax(v, 0.0f) : v, yp + i);
    }
    for (; i < HW; i++) {
        float v = fma(a, xp[i] - mu, b);
        if (residual)
            v += rp[i];
        yp[i] = relu ? fmax(v, 0.0f) : v;
    }
}

/* dbeta = sum g, dgamma = sum g * xhat, per channel (as the statistics: a work-group each on
 * GPUs, a work-item each on CPUs); g the gradient reaching the batch norm (bn_grad). */
#define BN_BWD_REDUCE_ARGS                                                                    \
    __global const float *x, ulong x_off, __global const float *dy, ulong dy_off,             \
        __global const float *gamma, ulong g_off, __global const float *beta, ulong b_off,    \
        __global const float *mean, ulong m_off, __global const float *invstd, ulong i_off,    \
        uint N, uint C, uint HW, __global float *dgamma, ulong dg_off, __global float *dbeta,  \
        ulong db_off
#define BN_BWD_REDUCE_PASS                                                                    \
    x, x_off, dy, dy_off, gamma, g_off, beta, b_off, mean, m_off, invstd, i_off, N, C, HW,    \
        dgamma, dg_off, dbeta, db_off
/* Channel c's coefficients of the backward pass (a and b: the ReLU's mask, bn_grad). */
#define BN_BWD_COEFFICIENTS(c)                                                                \
    float mu = mean[m_off + c], is = invstd[i_off + c], a = gamma[g_off + c] * is,            \
          b = beta[b_off + c]

/* GPU form: a work-group per channel (as clg_bn_stats). */
inline void bn_bwd_reduce(BN_BWD_REDUCE_ARGS, __local float *acc, const int masked)
{
    uint c = get_group_id(0), j = get_local_id(0);
    BN_BWD_COEFFICIENTS(c);
    float pg = 0.0f, pb = 0.0f;
    for (uint n = 0; n < N; n++) {
        size_t base = ((size_t)n * C + c) * HW;
        for (uint i = j; i < HW; i += BN_LOCAL) {
            float xv = x[x_off + base + i];
            float g = bn_grad(dy[dy_off + base + i], xv, a, mu, b, masked);
            pb += g;
            pg = fma(g, (xv - mu) * is, pg);
        }
    }
    float sg = clg_group_sum(acc, j, BN_LOCAL, pg), sb = clg_group_sum(acc, j, BN_LOCAL, pb);
    if (j)
        return;
    dgamma[dg_off + c] = sg;
    dbeta[db_off + c] = sb;
}

/* CPU form: a work-item per channel runs through its planes (as clg_bn_stats_planes). */
inline void bn_bwd_reduce_planes(BN_BWD_REDUCE_ARGS, const int masked)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    BN_BWD_COEFFICIENTS(c);
    float pg = 0.0f, pb = 0.0f;
    for (uint n = 0; n < N; n++) {
        size_t base = ((size_t)n * C + c) * HW;
        float16 vg = (float16)(0.0f), vb = (float16)(0.0f);
        uint i = 0;
        for (; i + 16 <= HW; i += 16) {
            float16 xv = vload16(0, x + x_off + base + i);
            float16 g = bn_grad16(vload16(0, dy + dy_off + base + i), xv, a, mu, b, masked);
            vb += g;
            vg = fma(g, xv - mu, vg);
        }
        for (; i < HW; i++) {
            float xv = x[x_off + base + i];
            float g = bn_grad(dy[dy_off + base + i], xv, a, mu, b, masked);
            pb += g;
            pg = fma(g, xv - mu, pg);
        }
        pb += clg_hsum16(vb);
        pg += clg_hsum16(vg);
    }
    dgamma[dg_off + c] = pg * is;
    dbeta[db_off + c] = pb;
}

#define BN_REDUCE_KERNEL(name, masked)                                                        \
    __kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))                            \
    void name(BN_BWD_REDUCE_ARGS)                                                             \
    {                                                                                         \
        __local float acc[BN_LOCAL];                                                          \
        bn_bwd_reduce(BN_BWD_REDUCE_PASS, acc, masked);                                       \
    }
#define BN_REDUCE_PLANES_KERNEL(name, masked)                                                 \
    __kernel void name(BN_BWD_REDUCE_ARGS)                                                    \
    {                                                                                         \
        bn_bwd_reduce_planes(BN_BWD_REDUCE_PASS, masked);                                     \
    }
BN_REDUCE_KERNEL(clg_bn_bwd_reduce, 0)
BN_REDUCE_KERNEL(clg_bn_bwd_reduce_relu, 1)
BN_REDUCE_PLANES_KERNEL(clg_bn_bwd_reduce_planes, 0)
BN_REDUCE_PLANES_KERNEL(clg_bn_bwd_reduce_relu_planes, 1)

/* dx = gamma * invstd / M * (M * g - dbeta - xhat * dgamma); GPU form a work-group per
 * (n, c) plane (dimension 1) as clg_bn_apply, CPU form a work-item per plane (dimension 0,
 * below NC) as clg_bn_apply_planes. */
#define BN_BWD_DX_ARGS                                                                        \
    __global const float *x, ulong x_off, __global const float *dy, ulong dy_off,             \
        __global const float *gamma, ulong g_off, __global const float *beta, ulong b_off,    \
        __global const float *mean, ulong m_off, __global const float *invstd, ulong i_off,    \
        __global const float *dgamma, ulong dg_off, __global const float *dbeta,               \
        ulong db_off, uint N, uint C, uint HW, __global float *dx, ulong dx_off, uint NC
#define BN_BWD_DX_PASS                                                                        \
    x, x_off, dy, dy_off, gamma, g_off, beta, b_off, mean, m_off, invstd, i_off, dgamma,      \
        dg_off, dbeta, db_off, N, C, HW, dx, dx_off, NC

inline void bn_bwd_dx_plane(BN_BWD_DX_ARGS, const int masked, const int planes, uint nc)
{
    uint c = nc % C;
    BN_BWD_COEFFICIENTS(c);
    float M = (float)N * (float)HW;
    float k = a / M, db = dbeta[db_off + c], dg = dgamma[dg_off + c];
    size_t at = (size_t)nc * HW;
    uint i = planes ? 0 : get_local_id(0);
    if (planes)
        for (; i + 16 <= HW; i += 16) {
            float16 xv = vload16(0, x + x_off + at + i);
            float16 g = bn_grad16(vload16(0, dy + dy_off + at + i), xv, a, mu, b, masked);
            float16 xhat = (xv - mu) * is;
            CLG_STORE16(k * (M * g - db - xhat * dg), dx + dx_off + at + i);
        }
    for (; i < HW; i += planes ? 1 : BN_LOCAL) {
        float xv = x[x_off + at + i], xhat = (xv - mu) * is;
        float g = bn_grad(dy[dy_off + at + i], xv, a, mu, b, masked);
        dx[dx_off + at + i] = k * (M * g - db - xhat * dg);
    }
}

inline void bn_bwd_dx(BN_BWD_DX_ARGS, const int masked, const int planes)
{
    /* GPU form: groups loop over planes past the grid, as clg_bn_apply */
    uint step = planes ? get_global_size(0) : get_num_groups(1);
    for (uint nc = planes ? get_global_id(0) : get_group_id(1); nc < NC; nc += step)
        bn_bwd_dx_plane(BN_BWD_DX_PASS, masked, planes, nc);
}

#define BN_DX_KERNEL(name, masked, planes, attribute)                                         \
    __kernel attribute void name(BN_BWD_DX_ARGS)                                              \
    {                                                                                         \
        bn_bwd_dx(BN_BWD_DX_PASS, masked, planes);                                            \
    }
#define BN_GROUP __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
BN_DX_KERNEL(clg_bn_bwd_dx, 0, 0, BN_GROUP)
BN_DX_KERNEL(clg_bn_bwd_dx_relu, 1, 0, BN_GROUP)
BN_DX_KERNEL(clg_bn_bwd_dx_planes, 0, 1, )
BN_DX_KERNEL(clg_bn_bwd_dx_relu_planes, 1, 1, )
