/* Depthwise convolution (MobileNet's, ShuffleNet's, EfficientNet's: one filter per channel,
 * groups = channels in = channels out) with DW_R x DW_S taps known at build time, so the tap
 * loops unroll. Two forms (src/ops/conv/depthwise.c picks): the generic one (GPUs, and
 * strides past 2 across) a work-item per output or input value, the weight gradient a
 * work-item per channel; the CPU form a work-item per row, 16 and 8 values at a time as
 * vectors. Taps outside the input read nothing (the index is clamped, the value selected 0),
 * and the weight gradient sums in a fixed order. */
#ifndef DW_R
#define DW_R 3
#endif
#ifndef DW_S
#define DW_S 3
#endif

#define DW_GEOM                                                                               \
    uint C, uint H, uint W, uint P, uint Q, uint sh, uint sw, uint pt, uint pl, uint dh, uint dw

/* Channel c's taps into wr, reversed with flip (a data gradient through the flipped filter). */
inline void dw_taps(const __global float *wc, uint flip, float *wr)
{
    for (int k = 0; k < DW_R * DW_S; k++)
        wr[k] = wc[flip ? DW_R * DW_S - 1 - k : k];
}

/* The output (or input) index `at` / stride when it is a whole one in [0, n), else -1: which
 * output a tap of the data gradient reaches. */
inline int dw_source(int at, uint stride, uint n)
{
    int k = at >= 0 ? at / (int)stride : -1;
    return at >= 0 && k * (int)stride == at && k < (int)n ? k : -1;
}

/* The columns of the next 16 outputs of a flat run of rows n wide, from this vector's q
 * (step = 16 mod n). */
inline int16 dw_next_columns(int16 q, int step, int n)
{
    q += (int16)(step);
    return select(q, q - (int16)(n), q >= (int16)(n));
}

/* y[n][c][p][q] = bias[c] + sum over taps of w[c][r][s] x[n][c][p sh - pt + r dh][q sw - pl +
 * s dw], then the epilogue's activation act (common.cl's clg_epi). */
__kernel void clg_dw_fwd(__global const float *x, ulong xo, __global const float *w, ulong wo,
                         __global float *y, ulong yo, __global const float *bias, ulong bo,
                         uint has_bias, uint act, float relu_max, ulong n, DW_GEOM)
{
    CLG_FOR_EACH(i, n) {
        size_t q = i % Q, t = i / Q, p = t % P, plane = t / P;
        uint c = (uint)(plane % C);
        const __global float *xp = x + xo + plane * (size_t)H * W;
        const __global float *wc = w + wo + (size_t)c * (DW_R * DW_S);
        float acc = has_bias ? bias[bo + c] : 0.0f;
        int h0 = (int)(p * sh) - (int)pt, w0 = (int)(q * sw) - (int)pl;
#pragma unroll
        for (int r = 0; r < DW_R; r++) {
            int h = h0 + r * (int)dh;
#pragma unroll
            for (int s = 0; s < DW_S; s++) {
                int u = w0 + s * (int)dw, in = h >= 0 && h < (int)H && u >= 0 && u < (int)W;
                float v = xp[(size_t)(in ? h : 0) * W + (size_t)(in ? u : 0)];
                acc = fma(wc[r * DW_S + s], in ? v : 0.0f, acc);
            }
        }
        y[yo + i] = clg_epi(act, relu_max, acc);
    }
}

/* The same for 8 inputs (rows of 8 to 15 outputs, as 14x14 planes have). */
inline float8 dw_load8(const __global float *xr, int u, uint W, uint sw)
{
    if (sw == 1 && u >= 0 && u + 8 <= (int)W)
        return vload8(0, xr + u);
    if (sw == 2 && u >= 0 && u + 16 <= (int)W)
        return vload16(0, xr + u).even;
    float v[8];
    for (int k = 0; k < 8; k++)
        v[k] = clg_row_at(xr, u + k * (int)sw, W);
    return vload8(0, v);
}

/* CPU form for planes that fit in local memory (all but the largest): a work-item per run of
 * `per_item` planes (a 7x7 plane is too little work for one), each plane copied once into a
 * zero-padded buffer of PH x PW (+ slack for the lanes past a row's end), then every output
 * row 16 values at a time, each tap one vector load with no bounds to test: a row kernel
 * spends most of a 7x7 or 14x14 plane gathering at the edges. flip as clg_dw_rows'. */
__kernel void clg_dw_planes(__global const float *x, ulong xo, __global const float *w, ulong wo,
                            __global float *y, ulong yo, __global const float *bias, ulong bo,
                            uint has_bias, uint act, float relu_max, uint flip, uint planes,
                            uint per_item,
                            uint C, uint H, uint W, uint P, uint Q, int pt, int pl, uint dh,
                            uint dw, uint sh, uint sw, uint PH, uint PW, __local float *pad)
{
    uint first = get_global_id(0) * per_item;
    for (uint plane = first; plane < planes && plane < first + per_item; plane++) {
        uint c = plane % C;
        const __global float *xp = x + xo + (size_t)plane * H * W;
        const __global float *wc = w + wo + (size_t)c * (DW_R * DW_S);
        float wr[DW_R * DW_S];
        dw_taps(wc, flip, wr);
        float b = has_bias ? bias[bo + c] : 0.0f;
        /* the padded plane: row i is input row i - pt, column j input column j - pl */
        for (uint i = 0; i < PH; i++)
            clg_pad_row_local(pad + (size_t)i * PW, xp, (int)i, pt, pl, H, W, PW, 0.0f);
        __global float *yp = y + yo + (size_t)plane * P * Q;
        /* the next plane's lines, a share with each output row, so that its copy finds them
         * in cache: the copy otherwise waits on memory with no work to overlap it */
        const __global float *next = xp + (size_t)H * W;
        uint lines = plane + 1 < planes ? (H * W + 15) / 16 : 0, per_row = (lines + P - 1) / P;
        for (uint p = 0; p < P; p++) {
            for (uint l = p * per_row; l < min(lines, (p + 1) * per_row); l++)
                CLG_PREFETCH(next + (size_t)l * 16, 0);
            for (uint q = 0; q < Q; q += 16) {
                float16 acc = (float16)(b);
#pragma unroll
                for (int r = 0; r < DW_R; r++) {
                    const __local float *row = pad + (size_t)(p * sh + (uint)r * dh) * PW + q * sw;
#pragma unroll
                    for (int s = 0; s < DW_S; s++) {
                        const __local float *at = row + (uint)s * dw;
                        float16 v = sw == 1 ? vload16(0, at)
                                            : (float16)(vload16(0, at).even, vload16(1, at).even);
                        acc = fma((float16)(wr[r * DW_S + s]), v, acc);
                    }
                }
                acc = clg_epi16(act, relu_max, acc);
                clg_store16_first(acc, yp + (size_t)p * Q + q, Q - q);
            }
        }
    }
}

/* CPU form for stride 1 with outputs the size of the inputs ("same" padding) on planes whose
 * rows are not whole vectors (7x7, 14x14, 28x28, 56x56): each plane is one run of H x W
 * values, and so is its output, so that tap (r, s) of output o reads input o + (r dh - pt) W
 * + s dw - pl: the plane is copied whole (16 at a time) behind zeros, and 16 outputs at a
 * time take each tap as one vector load, its lanes that wrapped into a neighbouring row (the
 * column q + s dw - pl outside [0, W)) selected 0. Rows 16 at a time wasted 9 of 16 lanes on
 * 7x7 planes, 2 on 14x14, and copied and stored rows short of a vector value by value.
 * The zeros ahead (base) and behind the plane are written once per work-item. flip as
 * clg_dw_rows'. */
__kernel void clg_dw_flat(__global const float *x, ulong xo, __global const float *w, ulong wo,
                          __global float *y, ulong yo, __global const float *bias, ulong bo,
                          uint has_bias, uint act, float relu_max, uint flip, uint planes,
                          uint per_item, uint C, uint H, uint W, uint pt, uint pl, uint dh,
                          uint dw, __local float *pad)
{
    uint hw = H * W, base = pt * W + pl;
    uint end = base + hw + ((DW_R - 1) * dh - pt) * W + (DW_S - 1) * dw - pl + 16;
    for (uint j = 0; j < base; j++)
        pad[j] = 0.0f;
    for (uint j = base + hw; j < end; j++)
        pad[j] = 0.0f;
    const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const int16 q0 = lane % (int)W;
    const int step = 16 % (int)W;
    uint first = get_global_id(0) * per_item;
    for (uint plane = first; plane < planes && plane < first + per_item; plane++) {
        uint c = plane % C;
        const __global float *xp = x + xo + (size_t)plane * hw;
        float wr[DW_R * DW_S];
        dw_taps(w + wo + (size_t)c * (DW_R * DW_S), flip, wr);
        float b = has_bias ? bias[bo + c] : 0.0f;
        __local float *dst = pad + base;
        uint j = 0;
        for (; j + 16 <= hw; j += 16)
            vstore16(vload16(0, xp + j), 0, dst + j);
        for (; j < hw; j++)
            dst[j] = xp[j];
        /* the next plane's lines, spread over this plane's outputs (see clg_dw_planes) */
        const __global float *next = xp + hw;
        uint lines = plane + 1 < planes ? (hw + 15) / 16 : 0, line = 0;
        __global float *yp = y + yo + (size_t)plane * hw;
        int16 q = q0; /* each lane's column */
        for (uint o = 0; o < hw; o += 16) {
            if (line < lines)
                CLG_PREFETCH(next + (size_t)line++ * 16, 0);
            float16 acc = (float16)(b);
#pragma unroll
            for (int s = 0; s < DW_S; s++) {
                int ds = s * (int)dw - (int)pl;
                int16 inside = (q >= (int16)(-ds)) & (q < (int16)((int)W - ds));
#pragma unroll
                for (int r = 0; r < DW_R; r++) {
                    float16 v = vload16(0, pad + o + (uint)r * dh * W + (uint)s * dw);
                    acc = fma((float16)(wr[r * DW_S + s]), select((float16)(0.0f), v, inside),
                              acc);
                }
            }
            acc = clg_epi16(act, relu_max, acc);
            clg_store16_first(acc, yp + o, hw - o);
            q = dw_next_columns(q, step, (int)W);
        }
    }
}

/* The same for stride 2 (dilation 1) where the outputs span the input's columns (2 Q >= W,
 * so that a tap past an output row's end reads padding): each plane is copied into four
 * phase planes, input rows 2i + a and columns 2j + b for a, b in {0, 1}, each row Q wide
 * (rows from -T, T = ceil(pt / 2), zeros outside the input), in which tap (r, s) of output
 * o = p Q + q is phase (a, b) = ((r - pt) & 1, (s - pl) & 1) at o + (du + T) Q + dv, with
 * du = (r - pt - a) / 2 and dv = (s - pl - b) / 2: a stride-1 flat run again, lanes with
 * q + dv outside [0, Q) selected 0. Phase planes are `plane` floats apart, each behind a gap
 * of `gap` zeros (written once per work-item). */
__kernel void clg_dw_flat2(__global const float *x, ulong xo, __global const float *w, ulong wo,
                           __global float *y, ulong yo, __global const float *bias, ulong bo,
                           uint has_bias, uint act, float relu_max, uint planes,
                           uint per_item, uint C, uint H, uint W, uint P, uint Q, uint pt,
                           uint pl, uint rows, uint gap, __local float *pad)
{
    uint T = (pt + 1) / 2, pq = P * Q, plane_len = rows * Q, step = plane_len + gap;
    for (uint ph = 0; ph <= 4; ph++)
        for (uint j = 0; j < gap; j++)
            pad[ph * step + j] = 0.0f;
    const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const int16 q0 = lane % (int)Q;
    const int qstep = 16 % (int)Q;
    uint first = get_global_id(0) * per_item;
    for (uint plane = first; plane < planes && plane < first + per_item; plane++) {
        uint c = plane % C;
        const __global float *xp = x + xo + (size_t)plane * H * W;
        float wr[DW_R * DW_S];
        dw_taps(w + wo + (size_t)c * (DW_R * DW_S), 0, wr);
        float b = has_bias ? bias[bo + c] : 0.0f;
        /* the phase planes: row i of (a, b) at gap + (2 a + b) step + (i + T) Q */
        for (uint i = 0; i < rows; i++)
            for (uint a = 0; a < 2; a++) {
                int h = 2 * ((int)i - (int)T) + (int)a;
                __local float *ev = pad + gap + (2 * a) * step + (size_t)i * Q;
                __local float *od = ev + step;
                /* value by value: taken where rows are short (under 12 outputs) */
                int in = h >= 0 && h < (int)H;
                const __global float *src = xp + (size_t)(in ? h : 0) * W;
                for (uint j = 0; j < Q; j++) {
                    ev[j] = in && 2 * j < W ? src[2 * j] : 0.0f;
                    od[j] = in && 2 * j + 1 < W ? src[2 * j + 1] : 0.0f;
                }
            }
        __global float *yp = y + yo + (size_t)plane * pq;
        int16 q = q0;
        for (uint o = 0; o < pq; o += 16) {
            float16 acc = (float16)(b);
#pragma unroll
            for (int s = 0; s < DW_S; s++) {
                int v = s - (int)pl, pb = v & 1, dv = (v - pb) / 2;
                int16 inside = (q >= (int16)(-dv)) & (q < (int16)((int)Q - dv));
#pragma unroll
                for (int r = 0; r < DW_R; r++) {
                    int u = r - (int)pt, pa = u & 1, du = (u - pa) / 2;
                    const __local float *at = pad + gap + (uint)(2 * pa + pb) * step + o +
                                              (size_t)((du + (int)T) * (int)Q + dv);
                    acc = fma((float16)(wr[r * DW_S + s]),
                              select((float16)(0.0f), vload16(0, at), inside), acc);
                }
            }
            acc = clg_epi16(act, relu_max, acc);
            clg_store16_first(acc, yp + o, pq - o);
            q = dw_next_columns(q, qstep, (int)Q);
        }
    }
}

/* CPU form, strides of 1 or 2 across: a work-item per output row (plane, p), 16 outputs at
 * a time as one vector, each tap one or two vector loads of an input row (gathered at the
 * row's ends). flip 1 runs the taps reversed: the data gradient of a stride-1 layer is this
 * pass over dy with the filter flipped and the padding (R - 1) dh - pt, (S - 1) dw - pl
 * (which may be negative). */
__kernel void clg_dw_rows(__global const float *x, ulong xo, __global const float *w, ulong wo,
                          __global float *y, ulong yo, __global const float *bias, ulong bo,
                          uint has_bias, uint act, float relu_max, uint flip, uint rows, uint C,
                          uint H, uint W,
                          uint P, uint Q, int pt, int pl, uint dh, uint dw, uint sh, uint sw)
{
    uint row = get_global_id(0);
    if (row >= rows)
        return;
    uint p = row % P, plane = row / P, c = plane % C;
    const __global float *xp = x + xo + (size_t)plane * H * W;
    const __global float *wc = w + wo + (size_t)c * (DW_R * DW_S);
    __global float *yr = y + yo + (size_t)row * Q;
    float wr[DW_R * DW_S];
    dw_taps(wc, flip, wr);
    float b = has_bias ? bias[bo + c] : 0.0f;
    int h0 = (int)(p * sh) - pt;
    uint q = 0;
    /* outputs q .. q + V - 1 as one vector of V (16, then 8) */
#define DW_ROW_VECTORS(V, LOAD, STORE)                                                        \
    for (; q + V <= Q; q += V) {                                                              \
        float##V acc = (float##V)(b);                                                         \
        _Pragma("unroll") for (int r = 0; r < DW_R; r++) {                                    \
            int h = h0 + r * (int)dh;                                                         \
            if (h < 0 || h >= (int)H)                                                         \
                continue;                                                                     \
            const __global float *xr = xp + (size_t)h * W;                                    \
            _Pragma("unroll") for (int s = 0; s < DW_S; s++)                                  \
                acc = fma((float##V)(wr[r * DW_S + s]),                                       \
                          LOAD(xr, (int)(q * sw) - pl + s * (int)dw, W, sw), acc);            \
        }                                                                                     \
        STORE(clg_epi##V(act, relu_max, acc), yr + q);                                        \
    }
#define DW_STORE8(v, p) vstore8(v, 0, p)
    DW_ROW_VECTORS(16, clg_row_load16, CLG_STORE16)
    DW_ROW_VECTORS(8, dw_load8, DW_STORE8)
    for (; q < Q; q++) {
        float acc = b;
        for (int r = 0; r < DW_R; r++) {
            int h = h0 + r * (int)dh;
            if (h < 0 || h >= (int)H)
                continue;
            const __global float *xr = xp + (size_t)h * W;
            for (int s = 0; s < DW_S; s++)
                acc = fma(wr[r * DW_S + s], clg_row_at(xr, (int)(q * sw) - pl + s * (int)dw, W), acc);
        }
        yr[q] = clg_epi(act, relu_max, acc);
    }
}

/* dx[n][c][h][u] = sum over the taps (r, s) whose output (p, q), p sh = h + pt - r dh and
 * q sw = u + pl - s dw, lies in the output: w[c][r][s] dy[n][c][p][q]. */
__kernel void clg_dw_bwd_data(__global const float *dy, ulong dyo, __global const float *w,
                              ulong wo, __global float *dx, ulong dxo, ulong n, DW_GEOM)
{
    CLG_FOR_EACH(i, n) {
        size_t u = i % W, t = i / W, h = t % H, plane = t / H;
        uint c = (uint)(plane % C);
        const __global float *g = dy + dyo + plane * (size_t)P * Q;
        const __global float *wc = w + wo + (size_t)c * (DW_R * DW_S);
        float acc = 0.0f;
#pragma unroll
        for (int r = 0; r < DW_R; r++) {
            int p = dw_source((int)h + (int)pt - r * (int)dh, sh, P);
#pragma unroll
            for (int s = 0; s < DW_S; s++) {
                int q = dw_source((int)u + (int)pl - s * (int)dw, sw, Q), in = p >= 0 && q >= 0;
                float v = g[(size_t)(in ? p : 0) * Q + (size_t)(in ? q : 0)];
                acc = fma(wc[r * DW_S + s], in ? v : 0.0f, acc);
            }
        }
        dx[dxo + i] = acc;
    }
}

/* dW[c][r][s] = sum over images and outputs of dy x at the tap, db[c] = sum of dy (has_db):
 * a work-item per channel. */
__kernel void clg_dw_bwd_weights(__global const float *x, ulong xo, __global const float *dy,
                                 ulong dyo, __global float *dW, ulong dwo, __global float *db,
                                 ulong dbo, uint has_db, uint N, DW_GEOM)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    float acc[DW_R * DW_S], b = 0.0f;
    for (int k = 0; k < DW_R * DW_S; k++)
        acc[k] = 0.0f;
    for (uint n = 0; n < N; n++) {
        size_t plane = (size_t)n * C + c;
        const __global float *xp = x + xo + plane * (size_t)H * W;
        const __global float *g = dy + dyo + plane * (size_t)P * Q;
        for (uint p = 0; p < P; p++)
            for (uint q = 0; q < Q; q++) {
                float d = g[(size_t)p * Q + q];
                int h0 = (int)(p * sh) - (int)pt, w0 = (int)(q * sw) - (int)pl;
                b += d;
#pragma unroll
                for (int r = 0; r < DW_R; r++) {
                    int h = h0 + r * (int)dh;
#pragma unroll
                    for (int s = 0; s < DW_S; s++) {
                        int u = w0 + s * (int)dw, in = h >= 0 && h < (int)H && u >= 0 && u < (int)W;
                        float v = xp[(size_t)(in ? h : 0) * W + (size_t)(in ? u : 0)];
                        acc[r * DW_S + s] = fma(d, in ? v : 0.0f, acc[r * DW_S + s]);
                    }
                }
            }
    }
    for (int k = 0; k < DW_R * DW_S; k++)
        dW[dwo + (size_t)c * (DW_R * DW_S) + k] = acc[k];
    if (has_db)
        db[dbo + c] = b;
}

/* CPU form of the weight gradient, strides of 1 or 2 across: a work-item per channel, each
 * output row's 16-wide vectors of dy times the tap's vector of inputs into one vector sum per
 * tap (the rest of a row one value at a time), the lanes added in a fixed tree at the end. */
__kernel void clg_dw_wgrad_rows(__global const float *x, ulong xo, __global const float *dy,
                                ulong dyo, __global float *dW, ulong dwo, __global float *db,
                                ulong dbo, uint has_db, uint N, uint C, uint H, uint W, uint P,
                                uint Q, int pt, int pl, uint dh, uint dw, uint sh, uint sw)
{
    uint c = get_global_id(0);
    if (c >= C)
        return;
    float16 acc[DW_R * DW_S], b16 = 0.0f;
    float rest[DW_R * DW_S], b = 0.0f;
    for (int k = 0; k < DW_R * DW_S; k++)
        acc[k] = 0.0f, rest[k] = 0.0f;
    for (uint n = 0; n < N; n++) {
        size_t plane = (size_t)n * C + c;
        const __global float *xp = x + xo + plane * (size_t)H * W;
        for (uint p = 0; p < P; p++) {
            const __global float *g = dy + dyo + (plane * P + p) * Q;
            int h0 = (int)(p * sh) - pt;
            uint q = 0;
            for (; q + 16 <= Q; q += 16) {
                float16 d = vload16(0, g + q);
                b16 += d;
#pragma unroll
                for (int r = 0; r < DW_R; r++) {
                    int h = h0 + r * (int)dh;
                    if (h < 0 || h >= (int)H)
                        continue;
                    const __global float *xr = xp + (size_t)h * W;
#pragma unroll
                    for (int s = 0; s < DW_S; s++)
                        acc[r * DW_S + s] = fma(d, clg_row_load16(xr, (int)(q * sw) - pl + s * (int)dw,
                                                             W, sw), acc[r * DW_S + s]);
                }
            }
            for (; q < Q; q++) {
                float d = g[q];
                b += d;
                for (int r = 0; r < DW_R; r++) {
                    int h = h0 + r * (int)dh;
                    if (h < 0 || h >= (int)H)
                        continue;
                    const __global float *xr = xp + (size_t)h * W;
                    for (int s = 0; s < DW_S; s++)
                        rest[r * DW_S + s] = fma(d, clg_row_at(xr, (int)(q * sw) - pl + s * (int)dw, W),
                                                 rest[r * DW_S + s]);
                }
            }
        }
    }
    for (int k = 0; k < DW_R * DW_S; k++)
        dW[dwo + (size_t)c * (DW_R * DW_S) + k] = clg_hsum16(acc[k]) + rest[k];
    if (has_db)
        db[dbo + c] = clg_hsum16(b16) + b;
}

/* CPU form of a data gradient with stride 2 across (any down): a work-item per input row
 * (plane, h); for 16 inputs u at a time, tap s reaches outputs q = (u + pl - s dw) / 2 at
 * every other lane: 8 values of dy's row spread over the even or the odd lanes. */
__kernel void clg_dw_bwd_rows2(__global const float *dy, ulong dyo, __global const float *w,
                               ulong wo, __global float *dx, ulong dxo, uint rows, uint C, uint H,
                               uint W, uint P, uint Q, int pt, int pl, uint dh, uint dw, uint sh)
{
    uint row = get_global_id(0);
    if (row >= rows)
        return;
    uint h = row % H, plane = row / H, c = plane % C;
    const __global float *g = dy + dyo + (size_t)plane * P * Q;
    const __global float *wc = w + wo + (size_t)c * (DW_R * DW_S);
    __global float *xr = dx + dxo + (size_t)row * W;
    uint u = 0;
    for (; u + 16 <= W; u += 16) {
        float16 acc = 0.0f;
        for (int r = 0; r < DW_R; r++) {
            int p = dw_source((int)h + pt - r * (int)dh, sh, P);
            if (p < 0)
                continue;
            const __global float *gr = g + (size_t)p * Q;
#pragma unroll
            for (int s = 0; s < DW_S; s++) {
                int t = (int)u + pl - s * (int)dw, odd = t & 1;
                float8 d = dw_load8(gr, odd ? (t + 1) / 2 : t / 2, Q, 1);
                float16 v = 0.0f;
                if (odd)
                    v.odd = d;
                else
                    v.even = d;
                acc = fma((float16)(wc[r * DW_S + s]), v, acc);
            }
        }
        CLG_STORE16(acc, xr + u);
    }
    for (; u < W; u++) {
        float acc = 0.0f;
        for (int r = 0; r < DW_R; r++) {
            int p = dw_source((int)h + pt - r * (int)dh, sh, P);
            if (p < 0)
                continue;
            for (int s = 0; s < DW_S; s++) {
                int q = dw_source((int)u + pl - s * (int)dw, 2, Q);
                float v = g[(size_t)p * Q + (q >= 0 ? q : 0)];
                acc = fma(wc[r * DW_S + s], q >= 0 ? v : 0.0f, acc);
            }
        }
        xr[u] = acc;
    }
}
