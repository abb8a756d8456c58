/* Pooling, NCHW. Geometry: input H x W, window R x S, stride sh/sw, top/left padding pt/pl,
 * output P x Q. MODE: 0 max, 1 average over the window inside the padded input (extent
 * Hp x Wp = H + pt + pb by W + pl + pr), 2 average over the window inside the input.
 * Forward: a work-item loops over output rows. Backward: over input rows, each element
 * gathering every window that covers it (no atomics: deterministic), recomputing max windows'
 * first argmax. Max windows always hold an input element (padding < window).
 * CPUs launch one work-item a plane (dimension 0 of 1; the kernels loop past the grid), so each
 * item reads its plane front to back: an item a row made a group of 8 planes 8 interleaved
 * streams, and 2 x 2 pooling ran at 3 GB/s on a Zen 3 VM. */

#ifndef TR
#define TR 2 /* window of the tiled backward */
#endif
#ifndef TS
#define TS 2
#endif

/* Window bounds of output (p, q) in input coordinates, clipped to [lo, hi). */
#define WIN_ROWS(p) int h0 = (int)((p) * sh) - (int)pt
#define WIN_COLS(q) int w0 = (int)((q) * sw) - (int)pl

/* Index (h * W + w) of the first largest element of window (p, q), -1 for an empty one;
 * without branches on the values (selects: on random data the branches were mispredicted). */
int clg_pool_argmax(const __global float *xc, uint H, uint W, int h0, int w0, uint R, uint S)
{
    int rlo = max(h0, 0), rhi = min(h0 + (int)R, (int)H);
    int slo = max(w0, 0), shi = min(w0 + (int)S, (int)W);
    if (rlo >= rhi || slo >= shi)
        return -1;
    int at = rlo * (int)W + slo;
    float best = xc[at];
    for (int r = rlo; r < rhi; r++)
        for (int s = slo; s < shi; s++) {
            float v = xc[r * (int)W + s];
            int better = v > best;
            best = better ? v : best;
            at = better ? r * (int)W + s : at;
        }
    return at;
}

/* Divisor of an average window. */
float clg_pool_count(int h0, int w0, uint R, uint S, int hlo, int hhi, int wlo, int whi)
{
    int rows = min(h0 + (int)R, hhi) - max(h0, hlo), cols = min(w0 + (int)S, whi) - max(w0, wlo);
    return rows > 0 && cols > 0 ? (float)(rows * cols) : 0.0f;
}

/* Output (p, q)'s value: the window's max or average (MODE as above). */
float clg_pool_window(const __global float *xc, uint H, uint W, uint R, uint S, uint sh, uint sw,
                      uint pt, uint pl, uint pb, uint pr, uint mode, uint p, uint q)
{
    WIN_ROWS(p);
    WIN_COLS(q);
    int rlo = max(h0, 0), rhi = min(h0 + (int)R, (int)H);
    int slo = max(w0, 0), shi = min(w0 + (int)S, (int)W);
    if (mode == 0) {
        float v = -INFINITY;
        for (int r = rlo; r < rhi; r++)
            for (int s = slo; s < shi; s++)
                v = fmax(v, xc[r * (int)W + s]);
        return v;
    }
    float sum = 0.0f;
    for (int r = rlo; r < rhi; r++)
        for (int s = slo; s < shi; s++)
            sum += xc[r * (int)W + s];
    float cnt = mode == 1 ? clg_pool_count(h0, w0, R, S, -(int)pt, (int)(H + pb), -(int)pl, (int)(W + pr))
                          : clg_pool_count(h0, w0, R, S, 0, (int)H, 0, (int)W);
    return cnt > 0.0f ? sum / cnt : 0.0f;
}

/* Forward: one work-item per output row (p, n*c), Q outputs, so each loads rows of the input
 * and the loop over q is contiguous (CPUs). */
__kernel void clg_pool_fwd(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                           uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt, uint pl,
                           uint pb, uint pr, uint P, uint Q, uint mode, uint NC)
{
    uint nc = get_global_id(1);
    if (nc >= NC)
        return;
    /* rows past the grid: CPUs launch an item a plane (see the top of this file) */
    CLG_FOR_EACH(p, P) {
        const __global float *xc = x + x_off + (size_t)nc * H * W;
        __global float *out = y + y_off + ((size_t)nc * P + p) * Q;
        for (uint q = 0; q < Q; q++)
            out[q] = clg_pool_window(xc, H, W, R, S, sh, sw, pt, pl, pb, pr, mode, p, q);
    }
}

/* CPU form of max pooling with strides of 1 or 2 across, for planes that fit in local
 * memory: a work-item per run of planes, each plane copied once into a PH x PW buffer
 * padded with -INFINITY (what clg_pool_window's fmax starts from, so windows over the
 * padding give the same values), then every output row 16 values at a time, each tap one
 * vector load (stride 2: the even lanes of two) and an fmax. The value-by-value form tested
 * every tap's bounds: ResNet-50's 3x3 stride-2 pooling ran at 2-3 GB/s. */
__kernel void clg_pool_max_planes(__global const float *x, ulong x_off, __global float *y,
                                  ulong y_off, uint planes, uint per_item, uint H, uint W,
                                  uint R, uint S, uint sh, uint sw, uint pt, uint pl, uint P,
                                  uint Q, uint PH, uint PW, uint slack, __local float *pad)
{
    for (uint j = PH * PW; j < PH * PW + slack; j++)
        pad[j] = -INFINITY; /* read only by lanes past a row's outputs */
    uint first = get_global_id(0) * per_item;
    for (uint plane = first; plane < planes && plane < first + per_item; plane++) {
        const __global float *xp = x + x_off + (size_t)plane * H * W;
        for (uint i = 0; i < PH; i++)
            clg_pad_row_local(pad + (size_t)i * PW, xp, (int)i, (int)pt, (int)pl, H, W, PW,
                              -INFINITY);
        __global float *yp = y + y_off + (size_t)plane * P * Q;
        for (uint p = 0; p < P; p++)
            for (uint q = 0; q < Q; q += 16) {
                float16 m = (float16)(-INFINITY);
                for (uint r = 0; r < R; r++) {
                    const __local float *row = pad + (size_t)(p * sh + r) * PW + q * sw;
                    for (uint t = 0; t < S; t++)
                        m = fmax(m, sw == 1 ? vload16(0, row + t)
                                            : (float16)(vload16(0, row + t).even,
                                                        vload16(1, row + t).even));
                }
                clg_store16_first(m, yp + (size_t)p * Q + q, Q - q);
            }
    }
}

/* GPUs: one work-item per output element (a 1-D launch of NC * P * Q: no grid dimension
 * limit), neighbours along q: coalesced. */
__kernel void clg_pool_fwd_px(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                              uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt, uint pl,
                              uint pb, uint pr, uint P, uint Q, uint mode, uint NC)
{
    CLG_FOR_EACH(i, (size_t)NC * P * Q) {
        uint q = i % Q, p = i / Q % P;
        const __global float *xc = x + x_off + i / ((size_t)P * Q) * H * W;
        y[y_off + i] = clg_pool_window(xc, H, W, R, S, sh, sw, pt, pl, pb, pr, mode, p, q);
    }
}

/* Max pooling's backward, first pass: each window's argmax (clg_pool_argmax's index), one
 * work-item per output row as the forward pass, so that the gather below compares an index
 * per covering window instead of searching each window again (R*S times fewer reads where
 * windows overlap: 3x3 stride 1 took 70% of an Inception step). */
__kernel void clg_pool_argmax_map(__global const float *x, ulong x_off, __global int *amax,
                                  uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt,
                                  uint pl, uint pb, uint pr, uint P, uint Q, uint mode, uint NC)
{
    uint nc = get_global_id(1);
    if (nc >= NC)
        return;
    /* rows past the grid: CPUs launch an item a plane (see the top of this file) */
    CLG_FOR_EACH(p, P) {
        const __global float *xc = x + x_off + (size_t)nc * H * W;
        __global int *out = amax + ((size_t)nc * P + p) * Q;
        WIN_ROWS(p);
        for (uint q = 0; q < Q; q++) {
            WIN_COLS(q);
            out[q] = clg_pool_argmax(xc, H, W, h0, w0, R, S);
        }
    }
}

/* GPUs: the same, one work-item per window, as clg_pool_fwd_px. */
__kernel void clg_pool_argmax_map_px(__global const float *x, ulong x_off, __global int *amax,
                                     uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt,
                                     uint pl, uint pb, uint pr, uint P, uint Q, uint mode, uint NC)
{
    CLG_FOR_EACH(i, (size_t)NC * P * Q) {
        uint q = i % Q, p = i / Q % P;
        WIN_ROWS(p);
        WIN_COLS(q);
        amax[i] = clg_pool_argmax(x + x_off + i / ((size_t)P * Q) * H * W, H, W, h0, w0, R, S);
    }
}

/* Input (h, w)'s gradient from the windows that cover it, in window order: for max those
 * whose argmax (clg_pool_argmax_map) it is, for averages each window's share. */
float clg_pool_grad(const __global float *dyc, const __global int *am, uint H, uint W, uint R,
                    uint S, uint sh, uint sw, uint pt, uint pl, uint pb, uint pr, uint P, uint Q,
                    uint mode, int h, int w)
{
    /* Windows covering (h, w): p*sh - pt <= h < p*sh - pt + R, the same across. */
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
                sum += am[p * (int)Q + q] == h * (int)W + w ? g : 0.0f;
                continue;
            }
            float cnt = mode == 1 ? clg_pool_count(h0, w0, R, S, -(int)pt, (int)(H + pb), -(int)pl, (int)(W + pr))
                                  : clg_pool_count(h0, w0, R, S, 0, (int)H, 0, (int)W);
            if (cnt > 0.0f)
                sum += g / cnt;
        }
    return sum;
}

/* Backward: one work-item per input row (h, n*c) (CPUs). Max: the row zeroed, then every
 * window of the output rows that cover it adds its gradient at its argmax
 * (clg_pool_argmax_map) when that lies in the row, windows in order, so each element sums in
 * the same order as a gather (clg_pool_grad). Average: each element gathers. */
__kernel void clg_pool_bwd(__global const float *x, ulong x_off, __global const float *dy,
                           ulong dy_off, __global float *dx, ulong dx_off,
                           uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt, uint pl,
                           uint pb, uint pr, uint P, uint Q, uint mode, uint NC, uint relu,
                           __global const int *amax)
{
    uint nc = get_global_id(1);
    if (nc >= NC)
        return;
    /* rows past the grid: CPUs launch an item a plane (see the top of this file) */
    CLG_FOR_EACH(hrow, H) {
        int h = (int)hrow;
        const __global float *xc = x + x_off + (size_t)nc * H * W;
        const __global float *dyc = dy + dy_off + (size_t)nc * P * Q;
        const __global int *am = amax + (size_t)nc * P * Q;
        __global float *out = dx + dx_off + (size_t)nc * H * W + (size_t)h * W;
        if (mode == 0) {
            int plo = max(0, (h + (int)pt - (int)R + (int)sh) / (int)sh), phi = min((int)P - 1, (h + (int)pt) / (int)sh);
            for (int w = 0; w < (int)W; w++)
                out[w] = 0.0f;
            int row = h * (int)W;
            for (int p = plo; p <= phi; p++)
                for (int q = 0; q < (int)Q; q++) {
                    int a = am[p * (int)Q + q] - row;
                    if (a >= 0 && a < (int)W)
                        out[a] += dyc[p * (int)Q + q];
                }
            for (int w = 0; relu && w < (int)W; w++)
                out[w] = xc[row + w] <= 0.0f ? 0.0f : out[w];
            continue;
        }
        for (int w = 0; w < (int)W; w++) {
            float sum = clg_pool_grad(dyc, am, H, W, R, S, sh, sw, pt, pl, pb, pr, P, Q, mode, h, w);
            out[w] = relu && xc[h * (int)W + w] <= 0.0f ? 0.0f : sum;
        }
    }
}

/* GPUs: one work-item per input element (1-D, as clg_pool_fwd_px), gathering. */
__kernel void clg_pool_bwd_px(__global const float *x, ulong x_off, __global const float *dy,
                              ulong dy_off, __global float *dx, ulong dx_off,
                              uint H, uint W, uint R, uint S, uint sh, uint sw, uint pt, uint pl,
                              uint pb, uint pr, uint P, uint Q, uint mode, uint NC, uint relu,
                              __global const int *amax)
{
    CLG_FOR_EACH(i, (size_t)NC * H * W) {
        uint w = i % W, h = i / W % H;
        size_t nc = i / ((size_t)H * W);
        float sum = clg_pool_grad(dy + dy_off + nc * P * Q, amax + nc * P * Q, H, W, R, S, sh, sw,
                                  pt, pl, pb, pr, P, Q, mode, (int)h, (int)w);
        dx[dx_off + i] = relu && x[x_off + i] <= 0.0f ? 0.0f : sum;
    }
}

/* Tiled windows (stride = window, no padding) of TR x TS, fixed at build time so that the
 * window loops unroll; 2 x 2 windows go four at a time as vectors along the row (POCL's
 * per-work-item code is scalar otherwise), the rest one by one. */
#if TR == 2 && TS == 2
#define POOL_VEC 4
#else
#define POOL_VEC 0
#endif

/* Index r * TS + s of the first largest element of the window at column q*TS of row xr. */
float clg_pool_window_max(const __global float *xr, int w, int q, int *at)
{
    float best = xr[q * TS];
    *at = 0;
#pragma unroll
    for (int r = 0; r < TR; r++)
#pragma unroll
        for (int s = 0; s < TS; s++) {
            float v = xr[r * w + q * TS + s];
            if (v > best) { /* strictly larger: ties keep the first */
                best = v;
                *at = r * TS + s;
            }
        }
    return best;
}

/* Forward when windows tile the input: one work-item per output row. */
__kernel void clg_pool_fwd_tiled(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                                 uint H, uint W, uint P, uint Q, uint mode, uint NC)
{
    uint nc = get_global_id(1);
    if (nc >= NC)
        return;
    /* rows past the grid: CPUs launch an item a plane (see the top of this file) */
    CLG_FOR_EACH(p, P) {
        const __global float *xr = x + x_off + (size_t)nc * H * W + (size_t)p * TR * W;
        __global float *out = y + y_off + ((size_t)nc * P + p) * Q;
        int w = (int)W, nq = (int)Q, q = 0;
        const float n = (float)(TR * TS);
#if POOL_VEC
        for (int q0 = 0; nq >= POOL_VEC && q0 < nq; q0 += POOL_VEC) {
            q = min(q0, nq - POOL_VEC); /* the last step overlaps the one before */
            float8 a = vload8(0, xr + 2 * q), b = vload8(0, xr + w + 2 * q);
            float4 v = mode == 0 ? fmax(fmax(a.even, a.odd), fmax(b.even, b.odd))
                                 : (a.even + a.odd + b.even + b.odd) / n;
            vstore4(v, 0, out + q);
        }
        q = nq >= POOL_VEC ? nq : 0;
#endif
        for (; q < nq; q++) {
            float v = mode == 0 ? -INFINITY : 0.0f;
#pragma unroll
            for (int r = 0; r < TR; r++)
#pragma unroll
                for (int s = 0; s < TS; s++) {
                    float e = xr[r * w + q * TS + s];
                    v = mode == 0 ? fmax(v, e) : v + e;
                }
            out[q] = mode == 0 ? v : v / n;
        }
    }
}

/* Backward when windows tile the input: one work-item per output row writes each of its
 * windows' block of dx once (the gradient at the first argmax, or spread evenly), plus the
 * columns and, for the last row, the rows that no window covers (zero). Every element of dx
 * is written exactly once. */
__kernel void clg_pool_bwd_tiled(__global const float *x, ulong x_off, __global const float *dy,
                                 ulong dy_off, __global float *dx, ulong dx_off, uint H, uint W,
                                 uint P, uint Q, uint mode, uint NC, uint relu)
{
    uint nc = get_global_id(1);
    if (nc >= NC)
        return;
    /* rows past the grid: CPUs launch an item a plane (see the top of this file) */
    CLG_FOR_EACH(p, P) {
        const __global float *xr = x + x_off + (size_t)nc * H * W + (size_t)p * TR * W;
        const __global float *g = dy + dy_off + ((size_t)nc * P + p) * Q;
        __global float *out = dx + dx_off + (size_t)nc * H * W + (size_t)p * TR * W;
        int w = (int)W, nq = (int)Q, q = 0;
        const float n = (float)(TR * TS);
#if POOL_VEC
        for (int q0 = 0; nq >= POOL_VEC && q0 < nq; q0 += POOL_VEC) {
            q = min(q0, nq - POOL_VEC); /* the last step overlaps the one before: same values */
            float8 a = vload8(0, xr + 2 * q), b = vload8(0, xr + w + 2 * q);
            float4 share = vload4(0, g + q);
            float8 top, bottom;
            if (mode == 0) {
                float4 best = a.even;
                int4 at = 0;
                at = select(at, (int4)1, isgreater(a.odd, best));
                best = fmax(best, a.odd);
                at = select(at, (int4)2, isgreater(b.even, best));
                best = fmax(best, b.even);
                at = select(at, (int4)3, isgreater(b.odd, best));
                best = fmax(best, b.odd);
                if (relu) /* the ReLU passed nothing where the window is all <= 0 */
                    share = select(share, (float4)0.0f, islessequal(best, (float4)0.0f));
                top.even = select((float4)0.0f, share, at == 0);
                top.odd = select((float4)0.0f, share, at == 1);
                bottom.even = select((float4)0.0f, share, at == 2);
                bottom.odd = select((float4)0.0f, share, at == 3);
            } else {
                share /= n;
                top.even = share;
                top.odd = share;
                bottom = top;
                if (relu) {
                    top = select(top, (float8)0.0f, islessequal(a, (float8)0.0f));
                    bottom = select(bottom, (float8)0.0f, islessequal(b, (float8)0.0f));
                }
            }
            vstore8(top, 0, out + 2 * q);
            vstore8(bottom, 0, out + w + 2 * q);
        }
        q = nq >= POOL_VEC ? nq : 0;
#endif
        for (; q < nq; q++) {
            int at;
            float best = clg_pool_window_max(xr, w, q, &at);
            float share = mode == 0 ? g[q] : g[q] / n;
            if (mode == 0 && relu && best <= 0.0f)
                share = 0.0f;
#pragma unroll
            for (int r = 0; r < TR; r++)
#pragma unroll
                for (int s = 0; s < TS; s++) {
                    int i = r * w + q * TS + s;
                    float v = mode != 0 || r * TS + s == at ? share : 0.0f;
                    out[i] = mode != 0 && relu && xr[i] <= 0.0f ? 0.0f : v;
                }
        }
        int rows = p + 1 == P ? (int)H - (int)p * TR : TR;
        for (int r = 0; r < rows; r++)
            for (int s = r < TR ? nq * TS : 0; s < w; s++)
                out[r * w + s] = 0.0f;
    }
}

/* Global average. CPUs: `per` planes a work-item, each summed in 16 lanes then a fixed tree
 * (one scalar chain of adds ran at 9 GB/s), so the order never varies. Launch: (items). */
__kernel void clg_pool_global_fwd16(__global const float *x, ulong x_off, __global float *y,
                                    ulong y_off, uint HW, uint NC, uint per)
{
    uint first = get_global_id(0) * per;
    for (uint nc = first; nc < NC && nc < first + per; nc++)
        y[y_off + nc] = clg_sum_run(x + x_off + (size_t)nc * HW, HW) / (float)HW;
}

/* GPUs: a work-group of GLOBAL_LOCAL items per (n, c), neighbours reading neighbours, the
 * partial sums added as a tree in a fixed order. Launch: (NC * GLOBAL_LOCAL). */
#define GLOBAL_LOCAL 64
__kernel __attribute__((reqd_work_group_size(GLOBAL_LOCAL, 1, 1)))
void clg_pool_global_fwd_group(__global const float *x, ulong x_off, __global float *y,
                               ulong y_off, uint HW, uint NC)
{
    __local float acc[GLOBAL_LOCAL];
    size_t nc = get_group_id(0);
    uint j = get_local_id(0);
    const __global float *xc = x + x_off + nc * HW;
    float sum = 0.0f;
    for (uint i = j; i < HW; i += GLOBAL_LOCAL)
        sum += xc[i];
    sum = clg_group_sum(acc, j, GLOBAL_LOCAL, sum);
    if (j == 0)
        y[y_off + nc] = sum / (float)HW;
    (void)NC;
}

/* CPUs: `per` planes a work-item, each plane's share stored by vectors (the one-element form
 * divided every index by HW: 0.66 ms for 16 planes of 28x28 per image at batch 64, where the
 * stores alone take a tenth of that). Launch: (items), as clg_pool_global_fwd16. */
__kernel void clg_pool_global_bwd16(__global const float *dy, ulong dy_off, __global float *dx,
                                    ulong dx_off, uint HW, uint NC, uint per)
{
    uint first = get_global_id(0) * per;
    for (uint nc = first; nc < NC && nc < first + per; nc++) {
        float v = dy[dy_off + nc] / (float)HW;
        __global float *p = dx + dx_off + (size_t)nc * HW;
        uint i = 0;
        for (; i + 16 <= HW; i += 16)
            CLG_STORE16((float16)(v), p + i);
        for (; i < HW; i++)
            p[i] = v;
    }
}

/* GPUs: one work-item per element of dx (1-D: no grid dimension limit). */
__kernel void clg_pool_global_bwd(__global const float *dy, ulong dy_off, __global float *dx,
                                  ulong dx_off, uint HW, ulong n)
{
    CLG_FOR_EACH(i, n)
        dx[dx_off + i] = dy[dy_off + i / HW] / (float)HW;
}
