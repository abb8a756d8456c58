/* Pooling, NCHW. Geometry: input H x W, window R x S, stride sh/sw, top/left padding pt/pl,
 * output P x Q. MODE: 0 max, 1 average over the window inside the padded input (extent
 * Hp x Wp = H + pt + pb by W + pl + pr), 2 average over the window inside the input.
 * Forward: one work-item per output element. Backward: one per input element, gathering every
 * window that covers it (no atomics: deterministic), recomputing max windows' first argmax. */

/* Window bounds of output (p, q) in input coordinates, clipped to [lo, hi). */
#define WIN_ROWS(p) int h0 = (int)((p) * sh) - (int)pt
#define WIN_COLS(q) int w0 = (int)((q) * sw) - (int)pl

/* Index (h * W + w) of the first largest element of window (p, q). */
int clg_pool_argmax(const __global float *xc, uint H, uint W, int h0, int w0, uint R, uint S)
{
    float best = -INFINITY;
    int at = -1;
    for (int r = max(h0, 0); r < min(h0 + (int)R, (int)H); r++)
        for (int s = max(w0, 0); s < min(w0 + (int)S, (int)W); s++) {
            float v = xc[r * (int)W + s];
            if (v > best || at < 0) {
                best = v;
                at = r * (int)W + s;
            }
        }
    return at;
}

/* Divisor of an average window. */
float clg_pool_count(int h0, int w0, uint R, uint S, int hlo, int hhi, int wlo, int whi)
{
    int rows = min(h0 + (int)R, hhi) - max(h0, hlo), cols = min(w0 + (int)S, whi) - max(w0, wlo);
    return rows > 0 && cols > 0 ? (float)(rows * cols) : 0.0f;
}

__kernel void clg_pool_fwd(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                           uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt, uint pl,
                           uint pb, uint pr, uint P, uint Q, uint mode)
{
    uint pq = get_global_id(0), nc = get_global_id(1);
    if (pq >= P * Q)
        return;
    uint p = pq / Q, q = pq % Q;
    const __global float *xc = x + x_off + (size_t)nc * H * W;
    WIN_ROWS(p);
    WIN_COLS(q);
    float out;
    if (mode == 0) {
        int at = clg_pool_argmax(xc, H, W, h0, w0, R, S);
        out = at >= 0 ? xc[at] : 0.0f;
    } else {
        float sum = 0.0f;
        for (int r = max(h0, 0); r < min(h0 + (int)R, (int)H); r++)
            for (int s = max(w0, 0); s < min(w0 + (int)S, (int)W); s++)
                sum += xc[r * (int)W + s];
        float cnt = mode == 1 ? clg_pool_count(h0, w0, R, S, -(int)pt, (int)(H + pb), -(int)pl, (int)(W + pr))
                              : clg_pool_count(h0, w0, R, S, 0, (int)H, 0, (int)W);
        out = cnt > 0.0f ? sum / cnt : 0.0f;
    }
    y[y_off + (size_t)nc * P * Q + pq] = out;
}

__kernel void clg_pool_bwd(__global const float *x, ulong x_off, __global const float *dy,
                           ulong dy_off, __global float *dx, ulong dx_off,
                           uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt, uint pl,
                           uint pb, uint pr, uint P, uint Q, uint mode)
{
    uint hw = get_global_id(0), nc = get_global_id(1);
    if (hw >= H * W)
        return;
    int h = (int)(hw / W), w = (int)(hw % W);
    const __global float *xc = x + x_off + (size_t)nc * H * W;
    const __global float *dyc = dy + dy_off + (size_t)nc * P * Q;
    /* Output rows whose window covers row h: p*sh - pt <= h < p*sh - pt + R. */
    int plo = max(0, (h + (int)pt - (int)R + (int)sh) / (int)sh), phi = min((int)P - 1, (h + (int)pt) / (int)sh);
    int qlo = max(0, (w + (int)pl - (int)S + (int)sw) / (int)sw), qhi = min((int)Q - 1, (w + (int)pl) / (int)sw);
    float sum = 0.0f;
    for (int p = plo; p <= phi; p++)
        for (int q = qlo; q <= qhi; q++) {
            WIN_ROWS(p);
            WIN_COLS(q);
            if (h < h0 || h >= h0 + (int)R || w < w0 || w >= w0 + (int)S)
                continue;
            float g = dyc[p * (int)Q + q];
            if (mode == 0) {
                if (clg_pool_argmax(xc, H, W, h0, w0, R, S) == (int)hw)
                    sum += g;
            } else {
                float cnt = mode == 1 ? clg_pool_count(h0, w0, R, S, -(int)pt, (int)(H + pb), -(int)pl, (int)(W + pr))
                                      : clg_pool_count(h0, w0, R, S, 0, (int)H, 0, (int)W);
                if (cnt > 0.0f)
                    sum += g / cnt;
            }
        }
    dx[dx_off + (size_t)nc * H * W + hw] = sum;
}

/* Global average: one work-item per (n, c), summing in a fixed order. */
__kernel void clg_pool_global_fwd(__global const float *x, ulong x_off, __global float *y,
                                  ulong y_off, uint HW, uint NC)
{
    uint nc = get_global_id(0);
    if (nc >= NC)
        return;
    const __global float *xc = x + x_off + (size_t)nc * HW;
    float sum = 0.0f;
    for (uint i = 0; i < HW; i++)
        sum += xc[i];
    y[y_off + nc] = sum / (float)HW;
}

__kernel void clg_pool_global_bwd(__global const float *dy, ulong dy_off, __global float *dx,
                                  ulong dx_off, uint HW)
{
    uint i = get_global_id(0), nc = get_global_id(1);
    if (i >= HW)
        return;
    dx[dx_off + (size_t)nc * HW + i] = dy[dy_off + nc] / (float)HW;
}
