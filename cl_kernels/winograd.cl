/* Winograd convolution F(WM x WM, WR x WR) for stride-1, dilation-1 layers (NCHW in and out):
 * each WM x WM output tile is Y = A^T [ sum over input channels (G g G^T) .* (B^T d B) ] A,
 * d the WA x WA input patch (WA = WM + WR - 1). F(4x4, 3x3) does 4x, F(2x2, 5x5) 2.78x
 * fewer multiplications than direct convolution.
 *
 * clg_wino_pad     the input, zero-padded, channels last: xq[n][hq][wq][c] (ldc >= C), so that
 *                  a patch of 16 channels is WA*WA contiguous vector loads.
 * clg_wino_filter  U[xi][o / 16][i][o % 16] = (G g G^T)[xi] for each filter (o output channels
 *                  padded to ldk with zeros), in slices of 16 output channels so that the
 *                  products read a slice as one stream (rows ldk apart, a line each 1-4 KiB,
 *                  kept the loads waiting on L2); flip: backward-data's rotated, transposed
 *                  filters.
 * clg_wino_input   V[xi][t][c] = (B^T d B)[xi] for tile t and 16 channels per work-item.
 * clg_wino_gemm    per work-item MR tiles x NR output channels: the WA*WA products over the
 *                  input channels (register-blocked, as gemm.cl), kept in private memory, then
 *                  the output transform, bias, ReLU and the stores. No M matrix in memory.
 * clg_wino_fused   clg_wino_input and clg_wino_gemm in one work-item, for layers of at most 16
 *                  channels in and out in passes that keep no V: no V in memory.
 * Tiles t = (image in chunk * th + tile row) * tw + tile column. The transforms (wino_*_tf) and
 * WM, WR come from winograd_h.cl, which the program puts first. */
#ifndef MR
#define MR 8
#endif
#ifndef NR
#define NR 32
#endif
#define WA (WM + WR - 1)
#define WA2 (WA * WA)
#define NV (NR / 16)

/* xq[n][hq][wq][c] = x[n][c][hq - top][wq - left] (0 outside x, and for c >= C up to ldc).
 * One work-item per (wq, hq, image): dimension 0 runs along input rows. */
__kernel void clg_wino_pad(__global const float *x, ulong x_off, ulong x_img, uint C, uint H,
                           uint W, int top, int left, uint Hq, uint Wq, uint ldc,
                           __global float *xq, ulong xq_off, ulong xq_img)
{
    uint wq = get_global_id(0), hq = get_global_id(1), n = get_global_id(2);
    if (wq >= Wq || hq >= Hq)
        return;
    int h = (int)hq - top, w = (int)wq - left;
    int inside = h >= 0 && h < (int)H && w >= 0 && w < (int)W;
    const __global float *src = x + x_off + n * x_img + (inside ? (size_t)h * W + (uint)w : 0);
    __global float *dst = xq + xq_off + n * xq_img + ((size_t)hq * Wq + wq) * ldc;
    for (uint c = 0; c < ldc; c++)
        dst[c] = inside && c < C ? src[(size_t)c * H * W] : 0.0f;
}

/* The 16 x 16 block r[row][lane] transposed in registers: four butterfly stages, stage b
 * exchanging blocks of b lanes between rows i and i + b (swizzles: shuffle2 with a constant
 * mask is a call into POCL's library). */
#define WINO_BUTTERFLY(r, b, LO, HI)                                                          \
    _Pragma("unroll") for (int i_ = 0; i_ < 16; i_++) if (!(i_ & (b))) {                      \
        float16 x_ = r[i_], y_ = r[i_ + (b)];                                                 \
        r[i_] = (float16)LO;                                                                  \
        r[i_ + (b)] = (float16)HI;                                                            \
    }

inline void wino_transpose16(float16 *r)
{
    WINO_BUTTERFLY(r, 8, (x_.lo, y_.lo), (x_.hi, y_.hi));
    WINO_BUTTERFLY(r, 4, (x_.s0123, y_.s0123, x_.s89ab, y_.s89ab),
                   (x_.s4567, y_.s4567, x_.scdef, y_.scdef));
    WINO_BUTTERFLY(r, 2, (x_.s01, y_.s01, x_.s45, y_.s45, x_.s89, y_.s89, x_.scd, y_.scd),
                   (x_.s23, y_.s23, x_.s67, y_.s67, x_.sab, y_.sab, x_.sef, y_.sef));
    WINO_BUTTERFLY(r, 1,
                   (x_.s0, y_.s0, x_.s2, y_.s2, x_.s4, y_.s4, x_.s6, y_.s6, x_.s8, y_.s8, x_.sa,
                    y_.sa, x_.sc, y_.sc, x_.se, y_.se),
                   (x_.s1, y_.s1, x_.s3, y_.s3, x_.s5, y_.s5, x_.s7, y_.s7, x_.s9, y_.s9, x_.sb,
                    y_.sb, x_.sd, y_.sd, x_.sf, y_.sf));
}

/* Lane k of a 16-lane load of input row `row` (chunk start w0): columns w0 + k where W >= 16;
 * for 8 <= W < 16, columns 0..7 and W-8..W-1 (two 8-wide loads, overlapping). */
inline uint wino_pad_col(uint W, uint w0, int k)
{
    return W >= 16 ? w0 + k : k < 8 ? k : W - 16 + k;
}

inline float16 wino_pad_load(const __global float *row, uint W, uint w0)
{
    return W >= 16 ? vload16(0, row + w0) : (float16)(vload8(0, row), vload8(0, row + W - 8));
}

/* CPU form of clg_wino_pad: a work-item per 16 input columns (the last chunk moved back to
 * end at W, overlapping its neighbour; rows of 8 to 15 as wino_pad_col) x 16 channels of an
 * image, row after row: 16 row vectors (one per channel) read, transposed in registers,
 * written as 16 channel vectors (where two chunks overlap, both store the same values); the
 * first and last chunk also write the padding columns' zeros. The GPU form's per-channel
 * loop ran one float at a time on POCL, and its stores were strided. Launch:
 * (ceil(W / 16), 1, images * ldc / 16), work-groups of one; W >= 8. */
__kernel void clg_wino_pad16(__global const float *x, ulong x_off, ulong x_img, uint C, uint H,
                             uint W, int top, int left, uint Hq, uint Wq, uint ldc,
                             __global float *xq, ulong xq_off, ulong xq_img)
{
    uint j = get_global_id(0), z = get_global_id(2), chunks = (W + 15) / 16;
    uint blocks = ldc / 16, n = z / blocks, c0 = (z % blocks) * 16;
    uint w0 = W >= 16 ? min(j * 16, W - 16) : 0, span = min(W, 16u);
    /* grid columns this item writes: its chunk's, and the padding beside the first or last */
    int first = (int)w0 + left, end = first + (int)span;
    int lo = j == 0 ? 0 : first, hi = j + 1 == chunks ? (int)Wq : end;
    lo = max(lo, 0), hi = min(hi, (int)Wq);
    const __global float *img = x + x_off + n * x_img;
    for (uint hq = 0; hq < Hq; hq++) {
        int h = (int)hq - top;
        __global float *dst = xq + xq_off + n * xq_img + (size_t)hq * Wq * ldc + c0;
        float16 r[16];
        if (h < 0 || h >= (int)H) {
            for (int q = lo; q < hi; q++)
                CLG_STORE16((float16)(0.0f), dst + (size_t)q * ldc);
            continue;
        }
#pragma unroll
        for (int k = 0; k < 16; k++) {
            uint c = min(c0 + (uint)k, C - 1);
            float16 v = wino_pad_load(img + ((size_t)c * H + (uint)h) * W, W, w0);
            r[k] = c0 + (uint)k < C ? v : (float16)(0.0f);
        }
        wino_transpose16(r);
#pragma unroll
        for (int k = 0; k < 16; k++) {
            int q = (int)wino_pad_col(W, w0, k) + left;
            if (q >= 0 && q < (int)Wq)
                CLG_STORE16(r[k], dst + (size_t)q * ldc);
        }
        for (int q = lo; q < first; q++)
            CLG_STORE16((float16)(0.0f), dst + (size_t)q * ldc);
        for (int q = max(end, lo); q < hi; q++)
            CLG_STORE16((float16)(0.0f), dst + (size_t)q * ldc);
    }
}

/* One filter per work-item: flip 0: in = c, out = k, g = w[k][c]; flip 1: in = k, out = c,
 * g = w[k][c] rotated 180 degrees. Launch: (outs padded to ldk, ins). flip is a constant in
 * each kernel below and nothing branches, so that POCL runs the work-items as vectors (a
 * runtime flip and a padding branch left it scalar: 0.3 ms for 2,048 filters). */
inline void wino_filter_one(__global const float *w, ulong w_off, uint Kg, uint Cg, uint ldk,
                            __global float *U, ulong u_off, const int flip)
{
    uint o = get_global_id(0), i = get_global_id(1);
    uint ins = flip ? Kg : Cg, outs = flip ? Cg : Kg;
    if (o >= ldk || i >= ins)
        return;
    uint oc = min(o, outs - 1); /* padding lanes transform a real filter, then store zeros */
    uint k = flip ? i : oc, c = flip ? oc : i;
    const __global float *f = w + w_off + ((size_t)k * Cg + c) * (WR * WR);
    float g[WR * WR], u[WA2];
    /* o's place in its slice of 16 (work-groups of 16 along o, so that the vectoriser sees
     * consecutive lanes: o / 16 and o % 16 left it scalar, 20x slower) */
    size_t slice = u_off + ((size_t)get_group_id(0) * ins + i) * 16 + get_local_id(0);
#pragma unroll
    for (int t = 0; t < WR * WR; t++)
        g[t] = f[flip ? WR * WR - 1 - t : t];
    wino_filter_tf(g, u);
#pragma unroll
    for (int t = 0; t < WA2; t++)
        U[slice + (size_t)t * ldk * ins] = o < outs ? u[t] : 0.0f;
}

__kernel void clg_wino_filter(__global const float *w, ulong w_off, uint Kg, uint Cg, uint ldk,
                              __global float *U, ulong u_off)
{
    wino_filter_one(w, w_off, Kg, Cg, ldk, U, u_off, 0);
}

__kernel void clg_wino_filter_flip(__global const float *w, ulong w_off, uint Kg, uint Cg,
                                   uint ldk, __global float *U, ulong u_off)
{
    wino_filter_one(w, w_off, Kg, Cg, ldk, U, u_off, 1);
}

/* V for T tiles of th x tw per image; 16 channels (c0 = 16 * dimension 0) per work-item,
 * reading channels [c_first + c0, +16) of xq. V[xi] holds vt >= T tiles' rows (the chunk's
 * rows start at v_off: a layer's kept V of the whole batch). Launch: (ceil(Cin / 16), T). */
__kernel void clg_wino_input(__global const float *xq, ulong xq_off, ulong xq_img, uint Wq,
                             uint ldc, uint c_first, uint th, uint tw, uint T, uint ldv,
                             __global float *V, uint vt, ulong v_off, uint blocks)
{
    uint cb = get_global_id(0), t = get_global_id(1);
    if (t >= T || cb >= blocks) /* the grid is rounded up to the work-groups */
        return;
    uint per_image = th * tw, n = t / per_image, ty = (t % per_image) / tw, tx = t % tw;
    const __global float *p = xq + xq_off + n * xq_img +
                              ((size_t)(ty * WM) * Wq + tx * WM) * ldc + c_first + cb * 16;
    float16 d[WA2], v[WA2];
#pragma unroll
    for (int r = 0; r < WA; r++)
#pragma unroll
        for (int s = 0; s < WA; s++)
            d[r * WA + s] = vload16(0, p + ((size_t)r * Wq + s) * ldc);
    wino_in_tf(d, v);
    /* The stores go to WA2 planes at once, more streams than the hardware prefetcher follows,
     * so each would wait for its line: claim the lines of the tile two items on now. */
#pragma unroll
    for (int x = 0; x < WA2; x++) {
        __global float *out = V + v_off + ((size_t)x * vt + t) * ldv + cb * 16;
        CLG_PREFETCH(out + 2 * (size_t)ldv, 1);
        CLG_STORE16(v[x], out);
    }
}

/* The output transform of MR tiles' products m (tiles t0.., channels k0..), + bias (epilogue
 * bit 1), the activation of bits >> 1 (clg_epi), stored where each tile lies inside the P x Q
 * output. */
#define WINO_OUT_ARGS                                                                         \
    uint th, uint tw, uint P, uint Q, __global float *Y, ulong y_off, ulong y_img,            \
        ulong y_chan, __global const float *bias, ulong bias_off, uint epilogue, float relu_max
#define WINO_OUT_PASS th, tw, P, Q, Y, y_off, y_img, y_chan, bias, bias_off, epilogue, relu_max

inline void wino_out_store(float16 (*m)[NV][WA2], uint t0, uint T, uint k0, uint Kout,
                           WINO_OUT_ARGS)
{
    uint kn = min((uint)NR, Kout - k0);
    uint per_image = th * tw;
    for (int i = 0; i < MR; i++) {
        uint t = t0 + (uint)i;
        if (t >= T)
            break;
        uint n = t / per_image, ty = (t % per_image) / tw, tx = t % tw;
        uint rows = min((uint)WM, P - ty * WM), cols = min((uint)WM, Q - tx * WM);
        __global float *y = Y + y_off + n * y_img + (size_t)k0 * y_chan + ty * WM * Q + tx * WM;
        for (int v = 0; v < NV && (uint)v * 16 < kn; v++) {
            float16 out[WM * WM];
            wino_out_tf(m[i][v], out);
            uint lanes = min(16u, kn - (uint)v * 16);
            /* the epilogue on whole vectors, then each channel's rows stored as vectors (one
             * float at a time, with its branches, took half of this kernel's time) */
            float16 bv = (float16)(0.0f);
            if (epilogue & 1) {
                float b[16];
                for (uint l = 0; l < 16; l++)
                    b[l] = l < lanes ? bias[bias_off + k0 + (uint)v * 16 + l] : 0.0f;
                bv = vload16(0, b);
            }
#if WM == 4
            /* 16 outputs of 16 channels transposed in registers: each channel's tile is then
             * one vector, its rows four 4-float stores (each row gathered from four vectors
             * took a fifth of this kernel's time) */
#pragma unroll
            for (int e = 0; e < 16; e++)
                out[e] = clg_epi16(epilogue >> 1, relu_max, out[e] + bv);
            wino_transpose16(out);
            for (uint l = 0; l < lanes; l++) {
                __global float *yc = y + (size_t)(v * 16 + l) * y_chan;
                float16 r = out[l];
                if (rows == 4 && cols == 4) {
                    vstore4(r.s0123, 0, yc);
                    vstore4(r.s4567, 0, yc + Q);
                    vstore4(r.s89ab, 0, yc + 2 * Q);
                    vstore4(r.scdef, 0, yc + 3 * Q);
                    continue;
                }
                float o[16];
                vstore16(r, 0, o);
                for (uint oy = 0; oy < rows; oy++, yc += Q)
                    for (uint ox = 0; ox < cols; ox++)
                        yc[ox] = o[oy * 4 + ox];
            }
#else
            float o[WM * WM][16];
#pragma unroll
            for (int e = 0; e < WM * WM; e++)
                vstore16(clg_epi16(epilogue >> 1, relu_max, out[e] + bv), 0, o[e]);
            for (uint l = 0; l < lanes; l++) {
                __global float *yc = y + (size_t)(v * 16 + l) * y_chan;
                for (uint oy = 0; oy < rows; oy++, yc += Q) {
                    const float *row = &o[oy * WM][0];
                    if (cols == WM) {
                        vstore2((float2)(row[l], row[16 + l]), 0, yc);
                    } else {
                        for (uint ox = 0; ox < cols; ox++)
                            yc[ox] = row[ox * 16 + l];
                    }
                }
            }
#endif
        }
    }
}

/* Y for MR tiles x NR output channels: for each xi, M[xi] = V[xi] (tiles x Cin, rows as in
 * clg_wino_input) . U[xi] (Cin x channels); then wino_out_store. Launch: (ldk / NR,
 * ceil(T / MR)). */
__kernel void clg_wino_gemm(__global const float *V, uint vt, ulong v_off, uint ldv, uint T,
                            uint Cin, __global const float *U, ulong u_off, uint ldk, uint Kout,
                            WINO_OUT_ARGS)
{
    uint tn = get_global_id(0), tm = get_global_id(1);
    uint t0 = tm * MR, k0 = tn * NR;
    if (t0 >= T || k0 >= ldk)
        return;
    float16 m[MR][NV][WA2]; /* each tile's points together: the output transform's input */
    for (int x = 0; x < WA2; x++) {
        const __global float *a[MR];
#pragma unroll
        for (int i = 0; i < MR; i++) /* tiles past T repeat the last one, not stored */
            a[i] = V + v_off + ((size_t)x * vt + min(t0 + (uint)i, T - 1)) * ldv;
        /* U's slice of 16 channels for point x: Cin rows of 16 floats, one stream */
        const __global float *b = U + u_off + ((size_t)x * ldk + k0) * Cin;
        /* The next point's rows of V lie a whole point's plane away (a new page each): fetch
         * them while this point's products run. */
        if (x + 1 < WA2)
#pragma unroll
            for (int i = 0; i < MR; i++)
                for (uint c = 0; c < Cin; c += 16)
                    CLG_PREFETCH(a[i] + (size_t)vt * ldv + c, 0);
        float16 acc[MR][NV];
        CLG_BLOCK_ZERO(acc);
        for (uint c = 0; c < Cin; c++, b += 16) {
            float16 bv[NV];
#pragma unroll
            for (int v = 0; v < NV; v++) /* the next 16 channels: the next slice */
                bv[v] = vload16(0, b + (size_t)v * Cin * 16);
#define A_TILE(i) a[i][c]
            CLG_BLOCK_FMA(acc, bv, A_TILE);
#undef A_TILE
        }
#pragma unroll
        for (int i = 0; i < MR; i++)
#pragma unroll
            for (int v = 0; v < NV; v++)
                m[i][v][x] = acc[i][v];
    }
    wino_out_store(m, t0, T, k0, Kout, WINO_OUT_PASS);
}

#if WM == 4
/* A pass that keeps no V (the data gradient, inference) of a layer of at most 16 channels in
 * and out (ResNet's first stage): MR tiles' input transforms (16 channels of the channels-last
 * grid xq, as clg_wino_input), products (as clg_wino_gemm, each point's products taking its
 * V's place) and output transforms in one work-item, V never in memory (written, then read
 * back, it was 4.5 times the input's bytes). Launch: (1, ceil(T / MR)). */
__kernel void clg_wino_fused(__global const float *xq, ulong xq_off, ulong xq_img, uint Wq,
                             uint ldc, uint c_first, uint T, uint Cin,
                             __global const float *U, ulong u_off, uint ldk, uint Kout,
                             WINO_OUT_ARGS)
{
    uint t0 = get_global_id(1) * MR, per_image = th * tw;
    if (t0 >= T)
        return;
    float16 m[MR][NV][WA2]; /* NV is 1: the host launches it for ldk 16 */
    for (int i = 0; i < MR; i++) { /* tiles past T repeat the last one, not stored */
        uint t = min(t0 + (uint)i, T - 1);
        uint n = t / per_image, ty = (t % per_image) / tw, tx = t % tw;
        const __global float *p =
            xq + xq_off + n * xq_img + ((size_t)(ty * WM) * Wq + tx * WM) * ldc + c_first;
        float16 d[WA2];
#pragma unroll
        for (int r = 0; r < WA; r++)
#pragma unroll
            for (int s = 0; s < WA; s++)
                d[r * WA + s] = vload16(0, p + ((size_t)r * Wq + s) * ldc);
        wino_in_tf(d, m[i][0]);
    }
    for (int x = 0; x < WA2; x++) {
        const __global float *b = U + u_off + (size_t)x * Cin * 16;
        float16 acc[MR][NV];
        CLG_BLOCK_ZERO(acc);
        for (uint c = 0; c < Cin; c++, b += 16) {
            float16 bv[NV];
            CLG_BLOCK_LOAD(bv, b);
#define A_TILE(i) ((const float *)&m[i][0][x])[c]
            CLG_BLOCK_FMA(acc, bv, A_TILE);
#undef A_TILE
        }
#pragma unroll
        for (int i = 0; i < MR; i++)
            m[i][0][x] = acc[i][0];
    }
    wino_out_store(m, t0, T, 0, Kout, WINO_OUT_PASS);
}
#endif

/* Weight gradient, F(r x r, m x m) at the same points: with V of the input patches (as in the
 * forward pass) and E of the dy tiles, dU[xi] (Kout x Cin) = sum over tiles E[xi]^T V[xi],
 * then dW = A'^T dU A' per filter. */

/* E[xi][t][k] = (G' e G'^T)[xi] for the m x m tile e of 16 channels of dy (channels last in
 * dyq from dyq_off: a grid at least th*m x tw*m whose rows are Wq long, zero past P x Q).
 * Launch: (ceil(Kout / 16), T). */
__kernel void clg_wino_dy(__global const float *dyq, ulong dyq_off, ulong dyq_img, uint Wq,
                          uint ldc, uint c_first, uint th, uint tw, uint T, uint lde,
                          __global float *E, uint et, ulong e_off, uint blocks)
{
    uint cb = get_global_id(0), t = get_global_id(1);
    if (t >= T || cb >= blocks) /* the grid is rounded up to the work-groups */
        return;
    uint per_image = th * tw, n = t / per_image, ty = (t % per_image) / tw, tx = t % tw;
    const __global float *p = dyq + dyq_off + n * dyq_img +
                              ((size_t)(ty * WM) * Wq + tx * WM) * ldc + c_first + cb * 16;
    float16 e[WM * WM], u[WA2];
#pragma unroll
    for (int r = 0; r < WM; r++)
#pragma unroll
        for (int s = 0; s < WM; s++)
            e[r * WM + s] = vload16(0, p + ((size_t)r * Wq + s) * ldc);
    wino_dy_tf(e, u);
#pragma unroll
    for (int x = 0; x < WA2; x++)
        CLG_STORE16(u[x], E + e_off + ((size_t)x * et + t) * lde + cb * 16);
}

/* dU[xi][k][c] (+)= sum over the T tiles of E[xi][t][k] V[xi][t][c], for WG_MR output
 * channels k and NR input channels c per work-item; accumulate adds to dU (the next chunk of
 * images). Launch: (ceil(Cin / NR), ceil(Kout / WG_MR), WA2). */
__kernel void clg_wino_wgemm(__global const float *E, uint lde, __global const float *V,
                             uint vt, ulong v_off, uint ldv, uint T, uint Kout, uint Cin,
                             __global float *dU, ulong du_off, uint accumulate)
{
    uint tn = get_global_id(0), tm = get_global_id(1), x = get_global_id(2);
    uint c0 = tn * NR, k0 = tm * WG_MR;
    if (c0 >= Cin || k0 >= Kout)
        return;
    const __global float *e = E + (size_t)x * T * lde + k0;
    const __global float *v = V + v_off + (size_t)x * vt * ldv + c0;
    float16 acc[WG_MR][NV];
#pragma unroll
    for (int i = 0; i < WG_MR; i++)
#pragma unroll
        for (int w = 0; w < NV; w++)
            acc[i][w] = (float16)(0.0f);
    for (uint t = 0; t < T; t++, e += lde, v += ldv) {
        float16 bv[NV];
        CLG_BLOCK_LOAD(bv, v);
        /* rows past Kout read E's padding (lde is a multiple of WG_MR): not stored */
#pragma unroll
        for (int i = 0; i < WG_MR; i++) {
            float a = e[i];
#pragma unroll
            for (int w = 0; w < NV; w++)
                acc[i][w] = fma((float16)(a), bv[w], acc[i][w]);
        }
    }
    for (int i = 0; i < WG_MR && k0 + (uint)i < Kout; i++) {
        __global float *out = dU + du_off + ((size_t)x * Kout + k0 + (uint)i) * Cin + c0;
        float vals[NR];
#pragma unroll
        for (int w = 0; w < NV; w++)
            vstore16(acc[i][w], w, vals);
        for (uint l = 0; l < NR && c0 + l < Cin; l++)
            out[l] = accumulate ? out[l] + vals[l] : vals[l];
    }
}

/* dW[k][c] (WR x WR) = A'^T dU[.][k][c] A' for 16 input channels c0.. of filter k: each
 * point's 16 values one vector load (a work-item per filter gathered its WA2 values a point's
 * plane apart: 80% of this kernel's time), then each filter's transform and its WR*WR floats
 * stored, the 16 filters' one run of memory. Launch: (ceil(Cin / 16), Kout). */
__kernel void clg_wino_wout(__global const float *dU, ulong du_off, uint Kout, uint Cin,
                            __global float *dw, ulong dw_off)
{
    uint c0 = get_global_id(0) * 16, k = get_global_id(1);
    if (c0 >= Cin || k >= Kout)
        return;
    uint lanes = min(16u, Cin - c0);
    float mm[WA2][16];
    for (int x = 0; x < WA2; x++) {
        const __global float *p = dU + du_off + ((size_t)x * Kout + k) * Cin + c0;
        if (lanes == 16)
            vstore16(vload16(0, p), 0, mm[x]);
        else
            for (uint l = 0; l < lanes; l++)
                mm[x][l] = p[l];
    }
    __global float *out = dw + dw_off + ((size_t)k * Cin + c0) * WR * WR;
    for (uint l = 0; l < lanes; l++, out += WR * WR) {
        float col[WA2], w[WR * WR];
#pragma unroll
        for (int x = 0; x < WA2; x++)
            col[x] = mm[x][l];
        wino_dw_tf(col, w);
#pragma unroll
        for (int i = 0; i < WR * WR; i++)
            out[i] = w[i];
    }
}
