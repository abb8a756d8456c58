/* Batch normalisation per channel, NCHW: statistics over n, h, w (M = N * HW values a
 * channel). Reductions: one work-item per channel, two passes (mean, then squared deviations)
 * in a fixed order, so results are deterministic and the variance never goes negative. */

__kernel void clg_bn_stats(__global const float *x, ulong x_off, uint N, uint C, uint HW,
                           float eps, float momentum, uint has_running,
                           __global float *rmean, ulong rm_off, __global float *rvar, ulong rv_off,
                           __global float *mean, ulong m_off, __global float *invstd, ulong i_off)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    float sum = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + x_off + ((size_t)n * C + c) * HW;
        float part = 0.0f;
        for (uint i = 0; i < HW; i++)
            part += xc[i];
        sum += part;
    }
    float M = (float)N * (float)HW, mu = sum / M, sq = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + x_off + ((size_t)n * C + c) * HW;
        float part = 0.0f;
        for (uint i = 0; i < HW; i++) {
            float d = xc[i] - mu;
            part = fma(d, d, part);
        }
        sq += part;
    }
    float var = sq / M;
    mean[m_off + c] = mu;
    invstd[i_off + c] = 1.0f / sqrt(var + eps);
    if (has_running) {
        float unbiased = M > 1.0f ? sq / (M - 1.0f) : var;
        rmean[rm_off + c] = (1.0f - momentum) * rmean[rm_off + c] + momentum * mu;
        rvar[rv_off + c] = (1.0f - momentum) * rvar[rv_off + c] + momentum * unbiased;
    }
}

/* y = gamma * (x - mean) * invstd + beta; with infer = 1, invstd is computed from a variance
 * (the running one) as 1 / sqrt(var + eps). */
__kernel void clg_bn_apply(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                           __global const float *gamma, ulong g_off, __global const float *beta,
                           ulong b_off, __global const float *mean, ulong m_off,
                           __global const float *scale, ulong s_off, uint C, uint HW,
                           uint infer, float eps)
{
    uint i = get_global_id(0), nc = get_global_id(1);
    if (i >= HW)
        return;
    uint c = nc % C;
    float is = infer ? 1.0f / sqrt(scale[s_off + c] + eps) : scale[s_off + c];
    size_t at = (size_t)nc * HW + i;
    y[y_off + at] = fma(gamma[g_off + c] * is, x[x_off + at] - mean[m_off + c], beta[b_off + c]);
}

/* dbeta = sum dy, dgamma = sum dy * xhat, per channel. */
__kernel void clg_bn_bwd_reduce(__global const float *x, ulong x_off, __global const float *dy,
                                ulong dy_off, __global const float *mean, ulong m_off,
                                __global const float *invstd, ulong i_off, uint N, uint C,
                                uint HW, __global float *dgamma, ulong dg_off,
                                __global float *dbeta, ulong db_off)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    float mu = mean[m_off + c], is = invstd[i_off + c], sg = 0.0f, sb = 0.0f;
    for (uint n = 0; n < N; n++) {
        size_t base = ((size_t)n * C + c) * HW;
        float pg = 0.0f, pb = 0.0f;
        for (uint i = 0; i < HW; i++) {
            float g = dy[dy_off + base + i];
            pb += g;
            pg = fma(g, (x[x_off + base + i] - mu) * is, pg);
        }
        sg += pg;
        sb += pb;
    }
    dgamma[dg_off + c] = sg;
    dbeta[db_off + c] = sb;
}

/* dx = gamma * invstd / M * (M * dy - dbeta - xhat * dgamma). */
__kernel void clg_bn_bwd_dx(__global const float *x, ulong x_off, __global const float *dy,
                            ulong dy_off, __global const float *gamma, ulong g_off,
                            __global const float *mean, ulong m_off, __global const float *invstd,
                            ulong i_off, __global const float *dgamma, ulong dg_off,
                            __global const float *dbeta, ulong db_off, uint N, uint C, uint HW,
                            __global float *dx, ulong dx_off)
{
    uint i = get_global_id(0), nc = get_global_id(1);
    if (i >= HW)
        return;
    uint c = nc % C;
    float M = (float)N * (float)HW, is = invstd[i_off + c];
    size_t at = (size_t)nc * HW + i;
    float xhat = (x[x_off + at] - mean[m_off + c]) * is;
    dx[dx_off + at] = gamma[g_off + c] * is / M *
                      (M * dy[dy_off + at] - dbeta[db_off + c] - xhat * dgamma[dg_off + c]);
}
