/* Winograd convolution for GPUs (src/ops/conv/winograd_gpu.c): F(WM x WM, WR x WR) with the
 * transforms of winograd_h.cl on one float each (WINO_VEC float), a tile of one channel per
 * work-item, between the tensors and point-major matrices that the GEMM's tiles multiply in
 * one batched product per pass (POINTS products at once):
 *   U[a][o][i]        the filters' transforms (o: channel out, i: channel in)
 *   V[a][s][i][tt]    the input's tiles, tile t = s * ts + tt (slices s of ts tiles)
 *   M[a][o][t]        the products (forward and data gradient)
 *   E[a][s][o][tt]    dy's tiles (weight gradient)
 * Tiles run in image order (image, tile row, tile column). Work-items loop past the grid in
 * dimension 0 (tiles), so no launch needs more than 65535 groups there. */
#define WA (WM + WR - 1)
#define POINTS (WA * WA)

/* U = G g G^T of each filter (o, i) of one group: w is outs x ins x WR x WR at w_off; with flip,
 * the data gradient's filters: filter (c, k) is layer filter (k, c) turned by 180 degrees. */
__kernel void clg_winog_filter(__global const float *w, ulong w_off, uint outs, uint ins,
                               uint flip, __global float *U, ulong u_off)
{
    U += u_off;
    uint i = get_global_id(0), o = get_global_id(1);
    if (i >= ins || o >= outs)
        return;
    size_t f = flip ? (size_t)i * outs + o : (size_t)o * ins + i;
    __global const float *src = w + w_off + f * (WR * WR);
    float g[WR * WR], u[POINTS];
    for (uint j = 0; j < WR * WR; j++)
        g[j] = src[flip ? WR * WR - 1 - j : j];
    wino_filter_tf(g, u);
    size_t plane = (size_t)outs * ins;
    for (uint a = 0; a < POINTS; a++)
        U[a * plane + (size_t)o * ins + i] = u[a];
}

/* The tile's first row and column in its plane, and the plane's image. */
static inline void tile_place(uint t, uint th, uint tw, uint *n, int *row, int *col)
{
    uint per_image = th * tw, r = t % per_image;
    *n = t / per_image;
    *row = (int)(r / tw * WM);
    *col = (int)(r % tw * WM);
}

/* The size x size patch of plane p (H x W) at (row, col) into d, zero outside the plane. */
static inline void load_patch(__global const float *p, uint H, uint W, int row, int col,
                              int size, float *d)
{
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++) {
            int y = row + i, x = col + j;
            int inside = y >= 0 && y < (int)H && x >= 0 && x < (int)W;
            d[i * size + j] = inside ? p[(size_t)y * W + x] : 0.0f;
        }
}

/* v's POINTS values of channel c, tile t, into the sliced point-major layout. */
static inline void store_sliced(__global float *out, const float *v, uint t, uint ts,
                                uint slices, uint chans, uint c)
{
    size_t plane = (size_t)slices * chans * ts;
    __global float *p = out + ((size_t)(t / ts) * chans + c) * ts + t % ts;
    for (uint a = 0; a < POINTS; a++)
        p[a * plane] = v[a];
}

/* V = B^T d B of the WA x WA patch of each tile of channel c (x: planes of H x W from x_off,
 * img floats an image) at (row - top, col - left), zero outside the plane; the last slice's
 * tail (t >= T) zeros. */
__kernel void clg_winog_input(__global const float *x, ulong x_off, ulong img, uint H, uint W,
                              int top, int left, uint th, uint tw, uint T, uint ts, uint chans,
                              __global float *V)
{
    uint c = get_global_id(1), slices = (T + ts - 1) / ts;
    if (c >= chans)
        return;
    for (uint t = get_global_id(0); t < slices * ts; t += get_global_size(0)) {
        float d[POINTS], v[POINTS];
        for (uint a = 0; a < POINTS; a++)
            d[a] = 0.0f;
        if (t < T) {
            uint n;
            int row, col;
            tile_place(t, th, tw, &n, &row, &col);
            load_patch(x + x_off + n * img + (size_t)c * H * W, H, W, row - top, col - left, WA, d);
        }
        wino_in_tf(d, v);
        store_sliced(V, v, t, ts, slices, chans, c);
    }
}

/* Weight gradient: E = G' e G'^T of each WM x WM tile e of dy's channel c (planes of P x Q),
 * zero past the plane's edge. */
__kernel void clg_winog_dy(__global const float *dy, ulong dy_off, ulong img, uint P, uint Q,
                           uint th, uint tw, uint T, uint ts, uint chans, __global float *E)
{
    uint c = get_global_id(1), slices = (T + ts - 1) / ts;
    if (c >= chans)
        return;
    for (uint t = get_global_id(0); t < slices * ts; t += get_global_size(0)) {
        float e[WM * WM], u[POINTS];
        for (uint a = 0; a < WM * WM; a++)
            e[a] = 0.0f;
        if (t < T) {
            uint n;
            int row, col;
            tile_place(t, th, tw, &n, &row, &col);
            load_patch(dy + dy_off + n * img + (size_t)c * P * Q, P, Q, row, col, WM, e);
        }
        wino_dy_tf(e, u);
        store_sliced(E, u, t, ts, slices, chans, c);
    }
}

/* y = A^T m A of each tile's products M[.][o][t] (outs x T a point), the WM x WM outputs
 * inside P x Q written to channel o's plane with the bias (flags & 1) and the activation of
 * flags >> 1 (clg_epi). */
__kernel void clg_winog_output(__global const float *M, uint T, uint outs, uint th, uint tw,
                               uint P, uint Q, __global float *y, ulong y_off, ulong img,
                               ulong plane_out, __global const float *bias, ulong bias_off,
                               uint flags, float relu_max)
{
    uint o = get_global_id(1);
    if (o >= outs)
        return;
    float b = flags & 1u ? bias[bias_off + o] : 0.0f;
    size_t plane = (size_t)outs * T;
    for (uint t = get_global_id(0); t < T; t += get_global_size(0)) {
        float m[POINTS], r[WM * WM];
        for (uint a = 0; a < POINTS; a++)
            m[a] = M[a * plane + (size_t)o * T + t];
        wino_out_tf(m, r);
        uint n;
        int row, col;
        tile_place(t, th, tw, &n, &row, &col);
        __global float *q = y + y_off + n * img + o * plane_out;
        for (int i = 0; i < WM; i++)
            for (int j = 0; j < WM; j++)
                if (row + i < (int)P && col + j < (int)Q) {
                    float v = r[i * WM + j] + b;
                    q[(size_t)(row + i) * Q + col + j] = clg_epi(flags >> 1, relu_max, v);
                }
    }
}

/* Weight gradient, after a chunk's products: dU[a][o][i] = (dU if accumulate) + the sum of
 * the chunk's slices in slice order (parts[a][s][o][i]); on the last chunk dW = A'^T dU A'
 * into the layer's outs x ins x WR x WR gradient at dw_off instead. */
__kernel void clg_winog_wsum(__global const float *parts, uint slices, uint outs, uint ins,
                             uint accumulate, uint last, __global float *dU, ulong du_off,
                             __global float *dw, ulong dw_off)
{
    dU += du_off;
    uint i = get_global_id(0), o = get_global_id(1);
    if (i >= ins || o >= outs)
        return;
    size_t plane = (size_t)outs * ins, at = (size_t)o * ins + i;
    float du[POINTS], g[WR * WR];
    for (uint a = 0; a < POINTS; a++) {
        float s = accumulate ? dU[a * plane + at] : 0.0f;
        for (uint k = 0; k < slices; k++)
            s += parts[((size_t)a * slices + k) * plane + at];
        du[a] = s;
        if (!last)
            dU[a * plane + at] = s;
    }
    if (!last)
        return;
    wino_dw_tf(du, g);
    __global float *out = dw + dw_off + at * (WR * WR);
    for (uint j = 0; j < WR * WR; j++)
        out[j] = g[j];
}
