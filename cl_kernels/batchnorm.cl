/* Batch normalisation per channel, NCHW: statistics over n, h, w (M = N * HW values a
 * channel). Reductions: one work-group of BN_LOCAL work-items a channel, each item striding
 * over the pixels of every image (neighbouring items read neighbouring floats: CPUs vectorise
 * across them), then a tree in local memory; two passes (mean, then squared deviations), all
 * in a fixed order, so results are deterministic and the variance never goes negative. */
#ifndef BN_LOCAL
#define BN_LOCAL 64 /* the host passes its own (src/ops/norm_internal.h) */
#endif

__kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
void clg_bn_stats(__global const float *x, ulong x_off, uint N, uint C, uint HW, float eps,
                  float momentum, uint has_running, __global float *rmean, ulong rm_off,
                  __global float *rvar, ulong rv_off, __global float *mean, ulong m_off,
                  __global float *invstd, ulong i_off)
{
    __local float acc[BN_LOCAL];
    uint c = get_group_id(0), j = get_local_id(0);
    float part = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + x_off + ((size_t)n * C + c) * HW;
        for (uint i = j; i < HW; i += BN_LOCAL)
            part += xc[i];
    }
    float M = (float)N * (float)HW, mu = clg_group_sum(acc, j, BN_LOCAL, part) / M;
    part = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + x_off + ((size_t)n * C + c) * HW;
        for (uint i = j; i < HW; i += BN_LOCAL) {
            float d = xc[i] - mu;
            part = fma(d, d, part);
        }
    }
    float sq = clg_group_sum(acc, j, BN_LOCAL, part);
    if (j)
        return;
    float var = sq / M;
    mean[m_off + c] = mu;
    invstd[i_off + c] = 1.0f / sqrt(var + eps);
    if (has_running) {
        float unbiased = M > 1.0f ? sq / (M - 1.0f) : var;
        rmean[rm_off + c] = (1.0f - momentum) * rmean[rm_off + c] + momentum * mu;
        rvar[rv_off + c] = (1.0f - momentum) * rvar[rv_off + c] + momentum * unbiased;
    }
}

/* y = gamma * (x - mean) * invstd + beta, then (a residual sum fused in) + r and max(., 0)
 * when relu; with infer = 1, invstd is computed from a variance (the running one) as
 * 1 / sqrt(var + eps). A work-group per (n, c) plane: the channel's values once per item, its
 * items striding over the plane's pixels. */
__kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
void clg_bn_apply(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                  __global const float *gamma, ulong g_off, __global const float *beta,
                  ulong b_off, __global const float *mean, ulong m_off,
                  __global const float *scale, ulong s_off, uint C, uint HW, uint infer,
                  float eps, __global const float *r, ulong r_off, uint residual, uint relu)
{
    uint j = get_local_id(0), nc = get_global_id(1), c = nc % C;
    float is = infer ? 1.0f / sqrt(scale[s_off + c] + eps) : scale[s_off + c];
    float a = gamma[g_off + c] * is, mu = mean[m_off + c], b = beta[b_off + c];
    size_t at = (size_t)nc * HW;
    for (uint i = j; i < HW; i += BN_LOCAL) {
        float v = fma(a, x[x_off + at + i] - mu, b);
        if (residual)
            v += r[r_off + at + i];
        y[y_off + at + i] = relu ? fmax(v, 0.0f) : v;
    }
}

/* dbeta = sum dy, dgamma = sum dy * xhat, per channel (a work-group each, as the stats). */
__kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
void clg_bn_bwd_reduce(__global const float *x, ulong x_off, __global const float *dy,
                       ulong dy_off, __global const float *mean, ulong m_off,
                       __global const float *invstd, ulong i_off, uint N, uint C, uint HW,
                       __global float *dgamma, ulong dg_off, __global float *dbeta, ulong db_off)
{
    __local float acc[BN_LOCAL];
    uint c = get_group_id(0), j = get_local_id(0);
    float mu = mean[m_off + c], is = invstd[i_off + c], pg = 0.0f, pb = 0.0f;
    for (uint n = 0; n < N; n++) {
        size_t base = ((size_t)n * C + c) * HW;
        for (uint i = j; i < HW; i += BN_LOCAL) {
            float g = dy[dy_off + base + i];
            pb += g;
            pg = fma(g, (x[x_off + base + i] - mu) * is, pg);
        }
    }
    float sg = clg_group_sum(acc, j, BN_LOCAL, pg), sb = clg_group_sum(acc, j, BN_LOCAL, pb);
    if (j)
        return;
    dgamma[dg_off + c] = sg;
    dbeta[db_off + c] = sb;
}

/* dx = gamma * invstd / M * (M * dy - dbeta - xhat * dgamma), a work-group per (n, c)
 * plane as in clg_bn_apply. */
__kernel __attribute__((reqd_work_group_size(BN_LOCAL, 1, 1)))
void clg_bn_bwd_dx(__global const float *x, ulong x_off, __global const float *dy,
                   ulong dy_off, __global const float *gamma, ulong g_off,
                   __global const float *mean, ulong m_off, __global const float *invstd,
                   ulong i_off, __global const float *dgamma, ulong dg_off,
                   __global const float *dbeta, ulong db_off, uint N, uint C, uint HW,
                   __global float *dx, ulong dx_off)
{
    uint j = get_local_id(0), nc = get_global_id(1), c = nc % C;
    float M = (float)N * (float)HW, is = invstd[i_off + c], mu = mean[m_off + c];
    float k = gamma[g_off + c] * is / M, db = dbeta[db_off + c], dg = dgamma[dg_off + c];
    size_t at = (size_t)nc * HW;
    for (uint i = j; i < HW; i += BN_LOCAL) {
        float xhat = (x[x_off + at + i] - mu) * is;
        dx[dx_off + at + i] = k * (M * dy[dy_off + at + i] - db - xhat * dg);
    }
}
