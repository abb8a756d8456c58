/* A first layer's forward pass on CPUs: few input channels (ST_C, 1 to 4; an RGB photo's 3),
 * ST_R x ST_S taps and the stride across (ST_SW, 1 or 2) known at build time, any stride
 * down, padding and dilation. im2col wrote and read back a column matrix ST_C * ST_R * ST_S
 * times the output's columns, and its GEMM summed only that many products per value. Here a
 * work-item computes STEM_K output channels of one output row: 16 columns at a time, a
 * float16 accumulator per channel, every tap one vector of 16 inputs (every ST_SW-th) times
 * each channel's weight, the taps unrolled (STEM_K FMAs per load). A block whose taps reach
 * into the left or right padding reads each input row's span as two or three vectors, zero
 * outside the row, and takes its taps as lane shifts of them. */
#ifndef ST_C
#define ST_C 3
#endif
#ifndef ST_R
#define ST_R 3
#endif
#ifndef ST_S
#define ST_S 3
#endif
#ifndef ST_SW
#define ST_SW 2
#endif
#define STEM_K 16
#define ST_TAPS (ST_C * ST_R * ST_S)

/* 16 inputs of row r from column u, every ST_SW-th: stride 2 as the even lanes of [u, u+16)
 * and the odd of [u+15, u+31), which reads no further than the last lane */
#if ST_SW == 1
#define STEM_LOAD(r, u) vload16(0, (r) + (u))
#else
#define STEM_LOAD(r, u) ((float16)(vload16(0, (r) + (u)).even, vload16(0, (r) + (u) + 15).odd))
#endif

/* Lanes [s, s + 16) of the 32 in lo, hi (s a constant once the taps are unrolled): swizzles,
 * in pieces of 8, 4, 3, 2 or 1 lanes, as OpenCL C allows (shuffle2 is a call into POCL's
 * library). A table, not a chain of shifts by 8, 4, 2 and 1: LLVM did not fold the chain, and
 * the 5x5 and 7x7 kernels came out with 2-3.4x the shuffle instructions. */
inline float16 stem_shift(float16 lo, float16 hi, int s)
{
    switch (s) {
    case 1:
        return (float16)(lo.s12345678, lo.s9abc, lo.sdef, hi.s0);
    case 2:
        return (float16)(lo.s23456789, lo.sabcd, lo.sef, hi.s01);
    case 3:
        return (float16)(lo.s3456789a, lo.sbcde, lo.sf, hi.s012);
    case 4:
        return (float16)(lo.s456789ab, lo.scdef, hi.s0123);
    case 5:
        return (float16)(lo.s56789abc, lo.sdef, hi.s0123, hi.s4);
    case 6:
        return (float16)(lo.s6789abcd, lo.sef, hi.s0123, hi.s45);
    case 7:
        return (float16)(lo.s789abcde, lo.sf, hi.s0123, hi.s456);
    case 8:
        return (float16)(lo.s89abcdef, hi.s01234567);
    case 9:
        return (float16)(lo.s9abc, lo.sdef, hi.s01234567, hi.s8);
    case 10:
        return (float16)(lo.sabcd, lo.sef, hi.s01234567, hi.s89);
    case 11:
        return (float16)(lo.sbcde, lo.sf, hi.s01234567, hi.s89a);
    case 12:
        return (float16)(lo.scdef, hi.s01234567, hi.s89ab);
    case 13:
        return (float16)(lo.sdef, hi.s01234567, hi.s89ab, hi.sc);
    case 14:
        return (float16)(lo.sef, hi.s01234567, hi.s89ab, hi.scd);
    case 15:
        return (float16)(lo.sf, hi.s01234567, hi.s89ab, hi.scde);
    case 16:
        return hi;
    default:
        return lo;
    }
}

/* A row's inputs for a block at the padding: the block's columns as vectors of 16, read lane
 * by lane only where they cross the padding, each tap a lane shift of them; stride 2 takes
 * the even lanes of two shifts (ST_S <= 17: stem.c). A copy of the span into private memory,
 * as before, stalled every tap's vector load on the copy's scalar stores: on a 28-column row,
 * both blocks at the padding, that took most of the layer's time. */
#define STEM_EDGE_ROW(EDGE, row, u0)                                                           \
    float16 ea = (float16)(0.0f), eb = (float16)(0.0f), ec = (float16)(0.0f);                 \
    if (EDGE) {                                                                               \
        ea = clg_row_load16(row, u0, W, 1);                                                   \
        if (ST_S > 1 || ST_SW == 2)                                                           \
            eb = clg_row_load16(row, u0 + 16, W, 1);                                          \
        if (ST_S > 1 && ST_SW == 2)                                                           \
            ec = clg_row_load16(row, u0 + 32, W, 1);                                          \
    }
#if ST_SW == 1
#define STEM_EDGE_TAP(s) stem_shift(ea, eb, s)
#else
#define STEM_EDGE_TAP(s) ((float16)(stem_shift(ea, eb, s).even, stem_shift(eb, ec, s).even))
#endif

/* acc[k] = the block of 16 columns from q's sums for channel k, WK(k) its weights; with
 * EDGE, each row's inputs as STEM_EDGE_ROW and STEM_EDGE_TAP read them. A row in the padding
 * reads row 0 and takes zeros (skipping it would branch around the sums: LLVM then keeps them
 * in memory). */
#define STEM_BLOCK(WK, EDGE)                                                                 \
    do {                                                                                      \
        _Pragma("unroll") for (int k = 0; k < STEM_K; k++) acc[k] = (float16)(0.0f);         \
        int u0 = (int)(q * ST_SW) - pl;                                                       \
        _Pragma("unroll") for (int c = 0; c < ST_C; c++)                                     \
            _Pragma("unroll") for (int r = 0; r < ST_R; r++) {                               \
                int h = h0 + r * (int)dh, in = h >= 0 && h < (int)H;                          \
                const __global float *row = xn + ((size_t)c * H + (size_t)(in ? h : 0)) * W;  \
                STEM_EDGE_ROW(EDGE, row, u0);                                                 \
                _Pragma("unroll") for (int s = 0; s < ST_S; s++) {                           \
                    float16 v = EDGE ? STEM_EDGE_TAP(s) : STEM_LOAD(row, u0 + s);             \
                    v = in ? v : (float16)(0.0f);                                             \
                    int tap = (c * ST_R + r) * ST_S + s;                                      \
                    _Pragma("unroll") for (int k = 0; k < STEM_K; k++)                       \
                        acc[k] = fma((float16)(WK(k)[tap]), v, acc[k]);                       \
                }                                                                             \
            }                                                                                 \
    } while (0)

/* y[n][k][p][:] for 16 channels from kb * STEM_K: items = N * P * channel blocks, the channel
 * block fastest (neighbouring items read the same input rows). Blocks of 16 columns; the last
 * is shifted left to end at Q (its first columns again, by the same item) unless Q < 16.
 * Blocks within the columns [qa, qb), whose taps read no padding across, load their inputs
 * straight from the row. Weights w[k][c][r][s]; channels past K read channel K - 1's and are
 * not stored. Then bias and the epilogue's activation (common.cl's clg_epi16). Dilation 1.
 * vec_type_hint: a work-item is already 16 lanes wide; without the hint Intel's CPU compiler
 * widens it across 16 work-items as well, and took 64 s to compile the unrolled 3x3 taps. */
__kernel __attribute__((vec_type_hint(float16))) void
clg_conv_stem_fwd(__global const float *x, ulong xo, __global const float *w, ulong wo,
                  __global float *y, ulong yo, __global const float *bias, ulong bo,
                  uint has_bias, uint act, float relu_max, uint items, uint H, uint W, uint K,
                  uint P, uint Q, uint sh, int pt, int pl, uint dh, uint qa, uint qb)
{
    uint i = get_global_id(0);
    if (i >= items)
        return;
    uint kblocks = (K + STEM_K - 1) / STEM_K, kb = i % kblocks, t = i / kblocks;
    uint p = t % P, n = t / P, k0 = kb * STEM_K;
    uint kn = min(K - k0, (uint)STEM_K);
    const __global float *xn = x + xo + (size_t)n * ST_C * H * W;
    const __global float *wb = w + wo + (size_t)k0 * ST_TAPS;
    __global float *yb = y + yo + ((size_t)n * K + k0) * P * Q + (size_t)p * Q;
    int h0 = (int)(p * sh) - pt;
    float b[STEM_K];
#pragma unroll
    for (int k = 0; k < STEM_K; k++)
        b[k] = has_bias ? bias[bo + k0 + min((uint)k, kn - 1)] : 0.0f;
    float16 acc[STEM_K];
    for (uint q16 = 0; q16 < Q; q16 += 16) {
        uint q = Q >= 16 ? min(q16, Q - 16) : 0;
        int inside = q >= qa && q + 16 <= qb;
#define STEM_FULL(k) (wb + (k) * ST_TAPS)
#define STEM_CLAMPED(k) (wb + min((uint)(k), kn - 1) * ST_TAPS)
        if (inside && kn == STEM_K)
            STEM_BLOCK(STEM_FULL, 0);
        else if (kn == STEM_K)
            STEM_BLOCK(STEM_FULL, 1);
        else
            STEM_BLOCK(STEM_CLAMPED, 1);
#undef STEM_FULL
#undef STEM_CLAMPED
#pragma unroll
        for (int k = 0; k < STEM_K; k++) {
            if ((uint)k >= kn)
                break;
            float16 out = clg_epi16(act, relu_max, acc[k] + b[k]);
            clg_store16_first(out, yb + (size_t)k * P * Q + q, Q);
        }
    }
}

/* The channel-vector form, for CPUs with 32 vector registers (AVX-512): a work-item computes
 * STEM_KV vectors of 16 output channels for STEM_QB columns of one output row. Every tap is
 * STEM_KV vector loads of weights (transposed by clg_conv_stem_wt: wt[tap][Kp]) and STEM_QB
 * scalar loads of inputs, each broadcast: STEM_KV * STEM_QB FMAs for STEM_KV + STEM_QB loads
 * (the row form above: 16 for 16 broadcast weights and a stride-2 input vector, shuffled).
 * The block goes through private memory to be stored channel by channel. */
#define STEM_KV 2 /* stem.c's KV_CHANNELS / 16 */
#define STEM_QB 8 /* stem.c's KV_COLUMNS: a block's columns of one channel are one vstore8 */
#define STEM_KW (16 * STEM_KV)

/* wt[tap][k] = w[k][tap] for k < K, 0 up to Kp. Launch: (Kp, taps). */
__kernel void clg_conv_stem_wt(__global const float *w, ulong wo, __global float *wt, uint K,
                               uint Kp)
{
    uint k = get_global_id(0), tap = get_global_id(1);
    if (k < Kp)
        wt[(size_t)tap * Kp + k] = k < K ? w[wo + (size_t)k * ST_TAPS + tap] : 0.0f;
}

/* acc[j][v] += x(column q0 + j, tap) * wt[tap][k0 + 16 v ...]; EDGE: columns may read the
 * padding across (0 there). */
#define STEM_KV_BLOCK(EDGE)                                                                    \
    do {                                                                                       \
        _Pragma("nounroll") for (int cr = 0; cr < ST_C * ST_R; cr++) {                        \
            int c = cr / ST_R, r = cr % ST_R;                                                  \
            int h = h0 + r * (int)dh, in = h >= 0 && h < (int)H;                               \
            const __global float *row = xn + ((size_t)c * H + (size_t)(in ? h : 0)) * W;       \
            _Pragma("unroll") for (int s = 0; s < ST_S; s++) {                                \
                const __global float *wp = wk + (size_t)(cr * ST_S + s) * Kp;                  \
                float16 wv[STEM_KV];                                                           \
                _Pragma("unroll") for (int v = 0; v < STEM_KV; v++) wv[v] =                   \
                    in ? vload16(v, wp) : (float16)(0.0f);                                     \
                _Pragma("unroll") for (int j = 0; j < STEM_QB; j++) {                         \
                    int u = u0 + j * ST_SW + s;                                                \
                    float xv = !EDGE || (u >= 0 && u < (int)W) ? row[u] : 0.0f;                \
                    _Pragma("unroll") for (int v = 0; v < STEM_KV; v++) acc[j][v] =           \
                        fma((float16)(xv), wv[v], acc[j][v]);                                  \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* y[n][k][p][q0 .. q0 + STEM_QB) for STEM_KW channels from k0: items = N * P * column blocks
 * * channel blocks, the channel block fastest. Column blocks of STEM_QB, the last shifted left
 * to end at Q (where Q >= STEM_QB); those within [qa, qb) read no padding across. Then bias
 * and the activation. Stride down sh, padding pt/pl, dilation dh down (1 across). */
__kernel __attribute__((vec_type_hint(float16))) void
clg_conv_stem_kv(__global const float *x, ulong xo, __global const float *wt, ulong wto,
                 __global float *y, ulong yo, __global const float *bias, ulong bo,
                 uint has_bias, uint act, float relu_max, uint items, uint H, uint W, uint K,
                 uint P, uint Q, uint sh, int pt, int pl, uint dh, uint qa, uint qb, uint Kp)
{
    uint i = get_global_id(0);
    if (i >= items)
        return;
    uint kblocks = Kp / STEM_KW, kb = i % kblocks, t = i / kblocks;
    uint qblocks = (Q + STEM_QB - 1) / STEM_QB, qk = t % qblocks;
    t /= qblocks;
    uint p = t % P, n = t / P, k0 = kb * STEM_KW;
    uint q0 = Q >= STEM_QB ? min(qk * STEM_QB, Q - STEM_QB) : 0;
    const __global float *xn = x + xo + (size_t)n * ST_C * H * W;
    const __global float *wk = wt + wto + k0;
    int h0 = (int)(p * sh) - pt, u0 = (int)(q0 * ST_SW) - pl;
    float16 acc[STEM_QB][STEM_KV];
#pragma unroll
    for (int j = 0; j < STEM_QB; j++)
#pragma unroll
        for (int v = 0; v < STEM_KV; v++)
            acc[j][v] = (float16)(0.0f);
    if (q0 >= qa && q0 + STEM_QB <= qb)
        STEM_KV_BLOCK(0);
    else
        STEM_KV_BLOCK(1);
    float tile[STEM_QB][STEM_KW];
#pragma unroll
    for (int v = 0; v < STEM_KV; v++) {
        float b[16];
        for (int l = 0; l < 16; l++)
            b[l] = has_bias ? bias[bo + min(k0 + 16 * v + l, K - 1)] : 0.0f;
        float16 bv = vload16(0, b);
#pragma unroll
        for (int j = 0; j < STEM_QB; j++)
            vstore16(clg_epi16(act, relu_max, acc[j][v] + bv), 0, &tile[j][16 * v]);
    }
    uint qn = min((uint)STEM_QB, Q);
    __global float *yb = y + yo + ((size_t)n * K + k0) * P * Q + (size_t)p * Q + q0;
    for (uint k = 0; k < STEM_KW && k0 + k < K; k++) {
        __global float *yk = yb + (size_t)k * P * Q;
        if (qn == STEM_QB) {
            float col[STEM_QB];
#pragma unroll
            for (int j = 0; j < STEM_QB; j++)
                col[j] = tile[j][k];
            vstore8(vload8(0, col), 0, yk);
        } else {
            for (uint j = 0; j < qn; j++)
                yk[j] = tile[j][k];
        }
    }
}
