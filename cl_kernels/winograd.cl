/* Winograd convolution F(WM x WM, WR x WR) for stride-1, dilation-1 layers (NCHW in and out):
 * each WM x WM output tile is Y = A^T [ sum over input channels (G g G^T) .* (B^T d B) ] A,
 * d the WA x WA input patch (WA = WM + WR - 1). F(4x4, 3x3) does 4x, F(2x2, 5x5) 2.78x
 * fewer multiplications than direct convolution.
 *
 * clg_wino_filter  U[xi][i][o] = (G g G^T)[xi] for each filter (o output channels padded to
 *                  ldk with zeros); flip: backward-data's rotated, transposed filters.
 * clg_wino_input   V[xi][t][c] = (B^T d B)[xi] for tile t and 16 channels per work-item,
 *                  read from the NCHW input (zero padding implied), channels last in V.
 * clg_wino_gemm    per work-item MR tiles x NR output channels: the WA*WA products over the
 *                  input channels (register-blocked, as gemm.cl), kept in private memory, then
 *                  the output transform, bias, ReLU and the stores. No M matrix in memory.
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

/* 16 columns of one input row as a vector: from column s0 where W >= 16; narrower rows
 * whole, as two overlapping loads of 8 (lanes 0..7 and 8..15 hold columns 0..7 and W-8..W-1)
 * or of 4 (lanes 0..7 as those, with 4), rows under 4 one float at a time; lanes past
 * them zero. wino_lane is the lane that holds column ic. */
inline float16 wino_row_load(const __global float *row, uint W, int s0)
{
    if (W >= 16)
        return vload16(0, row + s0);
    if (W >= 8)
        return (float16)(vload8(0, row), vload8(0, row + W - 8));
    if (W >= 4)
        return (float16)(vload4(0, row), vload4(0, row + W - 4), (float8)(0.0f));
    float t[16] = {0.0f};
    for (uint k = 0; k < W; k++)
        t[k] = row[k];
    return vload16(0, t);
}

inline int wino_lane(int ic, uint W, int s0)
{
    if (W >= 16)
        return ic - s0;
    if (W >= 8)
        return ic < 8 ? ic : ic - (int)W + 16;
    if (W >= 4)
        return ic < 4 ? ic : ic - (int)W + 8;
    return ic;
}

/* Rows h0 .. h0 + rows - 1 of channels [c0, c0 + 16) of one NCHW image (zero outside [0, H)
 * and for channels past `chans`), 16 columns each from s0, transposed in registers:
 * cols[r][lane] holds the 16 channels of the column at that lane. The transforms' input
 * read straight from the tensor: a channels-last padded copy in memory cost as much time as
 * the input transform itself (ResNet-20: 9 of 85 ms a step). */
inline void wino_rows(const __global float *img, uint chans, uint H, uint W, uint c0, int h0,
                      int rows, int step, int s0, float16 (*cols)[16])
{
    for (int r = 0; r < rows; r++) {
        int h = h0 + r;
        if (h < 0 || h >= (int)H) {
            for (int k = 0; k < 16; k++)
                cols[r][k] = (float16)(0.0f);
            continue;
        }
#pragma unroll
        for (int k = 0; k < 16; k++) {
            uint c = min(c0 + (uint)k, chans - 1);
            const __global float *row = img + ((size_t)c * H + (uint)h) * W;
            /* 16 planes' rows at once are more streams than the hardware prefetcher follows:
             * fetch the rows the next tile row's work-item reads, `step` rows down */
            if (h + step < (int)H)
                CLG_PREFETCH(row + (size_t)step * W + s0, 0);
            float16 v = wino_row_load(row, W, s0);
            cols[r][k] = c0 + (uint)k < chans ? v : (float16)(0.0f);
        }
        wino_transpose16(cols[r]);
    }
}

/* Column ic (an input column, any integer) of transposed row r: zero outside [0, W). */
inline float16 wino_col(float16 (*cols)[16], int r, int ic, uint W, int s0)
{
    return ic >= 0 && ic < (int)W ? cols[r][wino_lane(ic, W, s0)] : (float16)(0.0f);
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
#pragma unroll
    for (int t = 0; t < WR * WR; t++)
        g[t] = f[flip ? WR * WR - 1 - t : t];
    wino_filter_tf(g, u);
#pragma unroll
    for (int t = 0; t < WA2; t++)
        U[u_off + ((size_t)t * ins + i) * ldk + o] = o < outs ? u[t] : 0.0f;
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

/* Tiles of a tile row that one 16-column load covers: their WA-column patches, WM apart. */
#define WINO_GROUP ((16 - WA) / WM + 1)

/* V[xi][t][c] = (B^T d B)[xi] for tile t = (image * th + tile row) * tw + tile column, each
 * work-item 16 channels (c0 = 16 * dimension 0) of a group of WINO_GROUP tiles of one tile
 * row, read from x (NCHW, `ins` channels from x_off, H x W) placed at (top, left) of the tiles'
 * grid. V[xi] holds vt >= T tiles' rows (the chunk's rows start at v_off: a layer's kept V of
 * the whole batch). Launch: (ceil(ins / 16), th * ceil(tw / WINO_GROUP), images). */
__kernel void clg_wino_input(__global const float *x, ulong x_off, ulong x_img, uint ins,
                             uint H, uint W, int top, int left, uint th, uint tw, uint ldv,
                             __global float *V, uint vt, ulong v_off)
{
    uint cb = get_global_id(0), gy = get_global_id(1), n = get_global_id(2);
    uint groups = (tw + WINO_GROUP - 1) / WINO_GROUP, ty = gy / groups;
    uint tx0 = gy % groups * WINO_GROUP;
    if (ty >= th)
        return;
    int q0 = (int)(tx0 * WM) - left; /* the input column of the group's first patch column */
    int s0 = clamp(q0, 0, max((int)W - 16, 0));
    float16 cols[WA][16];
    wino_rows(x + x_off + n * x_img, ins, H, W, cb * 16, (int)(ty * WM) - top, WA, WM, s0, cols);
    uint count = min((uint)WINO_GROUP, tw - tx0);
    for (uint j = 0; j < count; j++) {
        float16 d[WA2], v[WA2];
#pragma unroll
        for (int c = 0; c < WA; c++)
#pragma unroll
            for (int r = 0; r < WA; r++)
                d[r * WA + c] = wino_col(cols, r, q0 + (int)(j * WM) + c, W, s0);
        wino_in_tf(d, v);
        uint t = (n * th + ty) * tw + tx0 + j;
        /* The stores go to WA2 planes at once, more streams than the hardware prefetcher
         * follows, so each would wait for its line: claim the lines of the tile two on now. */
#pragma unroll
        for (int xi = 0; xi < WA2; xi++) {
            __global float *out = V + v_off + ((size_t)xi * vt + t) * ldv + cb * 16;
            CLG_PREFETCH(out + 2 * (size_t)ldv, 1);
            CLG_STORE16(v[xi], out);
        }
    }
}

/* Y for MR tiles x NR output channels: for each xi, M[xi] = V[xi] (tiles x Cin, rows as in
 * clg_wino_input) . U[xi]
 * (Cin x channels); then Y = A^T M A per tile, + bias, ReLU (epilogue bits 1 and 2), stored
 * where the tile lies inside the P x Q output. Launch: (ldk / NR, ceil(T / MR)). */
__kernel void clg_wino_gemm(__global const float *V, uint vt, ulong v_off, uint ldv, uint T,
                            uint Cin, __global const float *U, ulong u_off, uint ldk, uint Kout,
                            uint th, uint tw, uint P, uint Q,
                            __global float *Y, ulong y_off, ulong y_img, ulong y_chan,
                            __global const float *bias, ulong bias_off, uint epilogue)
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
        const __global float *b = U + u_off + (size_t)x * Cin * ldk + k0;
        /* The next point's rows of V lie a whole point's plane away (a new page each): fetch
         * them while this point's products run. */
        if (x + 1 < WA2)
#pragma unroll
            for (int i = 0; i < MR; i++)
                for (uint c = 0; c < Cin; c += 16)
                    CLG_PREFETCH(a[i] + (size_t)vt * ldv + c, 0);
        float16 acc[MR][NV];
        CLG_BLOCK_ZERO(acc);
        for (uint c = 0; c < Cin; c++, b += ldk) {
            float16 bv[NV];
            CLG_BLOCK_LOAD(bv, b);
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
                out[e] = (epilogue & 2) ? fmax(out[e] + bv, 0.0f) : out[e] + bv;
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
                vstore16((epilogue & 2) ? fmax(out[e] + bv, 0.0f) : out[e] + bv, 0, o[e]);
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

/* Weight gradient, F(r x r, m x m) at the same points: with V of the input patches (as in the
 * forward pass) and E of the dy tiles, dU[xi] (Kout x Cin) = sum over tiles E[xi]^T V[xi],
 * then dW = A'^T dU A' per filter. */

/* E[xi][t][k] = (G' e G'^T)[xi] for the WM x WM tile e of 16 channels of dy (NCHW, `outs`
 * channels from dy_off, P x Q; zero past P x Q), 16 / WM tiles of a tile row per work-item
 * (one 16-column load). Launch: (ceil(outs / 16), th * ceil(tw / (16 / WM)), images). */
__kernel void clg_wino_dy(__global const float *dy, ulong dy_off, ulong dy_img, uint outs,
                          uint P, uint Q, uint th, uint tw, uint lde,
                          __global float *E, uint et, ulong e_off)
{
    const uint per = 16 / WM;
    uint cb = get_global_id(0), gy = get_global_id(1), n = get_global_id(2);
    uint groups = (tw + per - 1) / per, ty = gy / groups, tx0 = gy % groups * per;
    if (ty >= th)
        return;
    int q0 = (int)(tx0 * WM), s0 = clamp(q0, 0, max((int)Q - 16, 0));
    float16 cols[WM][16];
    wino_rows(dy + dy_off + n * dy_img, outs, P, Q, cb * 16, (int)(ty * WM), WM, WM, s0, cols);
    uint count = min(per, tw - tx0);
    for (uint j = 0; j < count; j++) {
        float16 e[WM * WM], u[WA2];
#pragma unroll
        for (int c = 0; c < WM; c++)
#pragma unroll
            for (int r = 0; r < WM; r++)
                e[r * WM + c] = wino_col(cols, r, q0 + (int)(j * WM) + c, Q, s0);
        wino_dy_tf(e, u);
        uint t = (n * th + ty) * tw + tx0 + j;
#pragma unroll
        for (int xi = 0; xi < WA2; xi++)
            CLG_STORE16(u[xi], E + e_off + ((size_t)xi * et + t) * lde + cb * 16);
    }
}

/* dU[xi][k][c] (+)= sum over the T tiles of E[xi][t][k] V[xi][t][c], for MR output channels k
 * and NR input channels c per work-item; accumulate adds to dU (the next chunk of images).
 * Launch: (ceil(Cin / NR), ceil(Kout / MR), WA2). */
__kernel void clg_wino_wgemm(__global const float *E, uint lde, __global const float *V,
                             uint vt, ulong v_off, uint ldv, uint T, uint Kout, uint Cin,
                             __global float *dU, ulong du_off, uint accumulate)
{
    uint tn = get_global_id(0), tm = get_global_id(1), x = get_global_id(2);
    uint c0 = tn * NR, k0 = tm * MR;
    if (c0 >= Cin || k0 >= Kout)
        return;
    const __global float *e = E + (size_t)x * T * lde + k0;
    const __global float *v = V + v_off + (size_t)x * vt * ldv + c0;
    float16 acc[MR][NV];
    CLG_BLOCK_ZERO(acc);
    for (uint t = 0; t < T; t++, e += lde, v += ldv) {
        float16 bv[NV];
        CLG_BLOCK_LOAD(bv, v);
        /* rows past Kout read E's padding or the next tile: not stored */
#define A_CHANNEL(i) e[i]
        CLG_BLOCK_FMA(acc, bv, A_CHANNEL);
#undef A_CHANNEL
    }
    for (int i = 0; i < MR && k0 + (uint)i < Kout; i++) {
        __global float *out = dU + du_off + ((size_t)x * Kout + k0 + (uint)i) * Cin + c0;
        float vals[NR];
#pragma unroll
        for (int w = 0; w < NV; w++)
            vstore16(acc[i][w], w, vals);
        for (uint l = 0; l < NR && c0 + l < Cin; l++)
            out[l] = accumulate ? out[l] + vals[l] : vals[l];
    }
}

/* dW[k][c] (WR x WR) = A'^T dU[.][k][c] A'. Launch: (Cin, Kout). */
__kernel void clg_wino_wout(__global const float *dU, ulong du_off, uint Kout, uint Cin,
                            __global float *dw, ulong dw_off)
{
    uint c = get_global_id(0), k = get_global_id(1);
    if (c >= Cin || k >= Kout)
        return;
    float mm[WA2], w[WR * WR];
    for (int x = 0; x < WA2; x++)
        mm[x] = dU[du_off + ((size_t)x * Kout + k) * Cin + c];
    wino_dw_tf(mm, w);
    __global float *out = dw + dw_off + ((size_t)k * Cin + c) * WR * WR;
    for (int i = 0; i < WR * WR; i++)
        out[i] = w[i];
}
