/* Winograd F(2x2, 3x3) convolution, NCHW: 3x3 kernel, stride 1, dilation 1. Each 2x2 output
 * tile comes from a 4x4 input patch: Y = A^T [ (G g G^T) .* (B^T d B) ] A, with the 16
 * elementwise products summed over input channels as 16 GEMMs (done by clg_sgemm's kernels).
 * Layouts: U[grp][xi][out][in] (transformed filters), V[xi][in][t] and M[xi][out][t] for the
 * T tiles of a chunk of images (t = image * tiles_h * tiles_w + tile). One work-item per
 * filter, per (tile, channel) or per (tile, output channel). */

/* flip = 0: U = G w[o][i] G^T (forward, out = K). flip = 1: the backward-data filter
 * w'[c][k] = rot180(w[k][c]) (out = C). Launch: (in per group, out per group, groups). */
__kernel void clg_wino_filter(__global const float *w, ulong w_off, uint Kg, uint Cg, uint flip,
                              __global float *U)
{
    uint i = get_global_id(0), o = get_global_id(1), grp = get_global_id(2);
    uint in_n = flip ? Kg : Cg, out_n = flip ? Cg : Kg;
    if (i >= in_n || o >= out_n)
        return;
    uint k = flip ? i : o, c = flip ? o : i;
    const __global float *f = w + w_off + ((size_t)(grp * Kg + k) * Cg + c) * 9;
    float g[3][3];
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++)
            g[r][s] = flip ? f[(2 - r) * 3 + (2 - s)] : f[r * 3 + s];
    float t[4][3]; /* G g */
    for (int s = 0; s < 3; s++) {
        t[0][s] = g[0][s];
        t[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
        t[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]);
        t[3][s] = g[2][s];
    }
    for (int r = 0; r < 4; r++) {
        float u[4] = {t[r][0], 0.5f * (t[r][0] + t[r][1] + t[r][2]),
                      0.5f * (t[r][0] - t[r][1] + t[r][2]), t[r][2]};
        for (int s = 0; s < 4; s++)
            U[(((size_t)grp * 16 + r * 4 + s) * out_n + o) * in_n + i] = u[s];
    }
}

/* V = B^T d B for every tile of nb images of one group's `Cin` channels (first channel c0 of
 * Ctot). Launch: (tiles per image, Cin, nb). */
__kernel void clg_wino_input(__global const float *x, ulong x_off, ulong x_img, uint Cin,
                             uint H, uint W, uint pt, uint pl, uint th, uint tw, ulong T,
                             __global float *V)
{
    uint tile = get_global_id(0), c = get_global_id(1), n = get_global_id(2);
    if (tile >= th * tw || c >= Cin)
        return;
    int h0 = (int)(tile / tw) * 2 - (int)pt, w0 = (int)(tile % tw) * 2 - (int)pl;
    const __global float *xc = x + x_off + n * x_img + (size_t)c * H * W;
    float d[4][4];
    for (int r = 0; r < 4; r++)
        for (int s = 0; s < 4; s++) {
            int h = h0 + r, ww = w0 + s;
            d[r][s] = h >= 0 && h < (int)H && ww >= 0 && ww < (int)W ? xc[(uint)h * W + (uint)ww] : 0.0f;
        }
    float t[4][4]; /* B^T d */
    for (int s = 0; s < 4; s++) {
        t[0][s] = d[0][s] - d[2][s];
        t[1][s] = d[1][s] + d[2][s];
        t[2][s] = d[2][s] - d[1][s];
        t[3][s] = d[1][s] - d[3][s];
    }
    size_t col = (size_t)n * th * tw + tile;
    for (int r = 0; r < 4; r++) {
        float v[4] = {t[r][0] - t[r][2], t[r][1] + t[r][2], t[r][2] - t[r][1], t[r][1] - t[r][3]};
        for (int s = 0; s < 4; s++)
            V[((size_t)(r * 4 + s) * Cin + c) * T + col] = v[s];
    }
}

/* Y = A^T m A for every tile and output channel; writes the part of each 2x2 tile inside the
 * Hout x Wout output. Launch: (tiles per image, Cout, nb). */
__kernel void clg_wino_output(__global const float *M, ulong m_off, ulong T, uint Cout, uint th,
                              uint tw, __global float *y, ulong y_off, ulong y_img, uint Hout,
                              uint Wout)
{
    M += m_off;
    uint tile = get_global_id(0), k = get_global_id(1), n = get_global_id(2);
    if (tile >= th * tw || k >= Cout)
        return;
    size_t col = (size_t)n * th * tw + tile;
    float m[4][4];
    for (int i = 0; i < 16; i++)
        m[i / 4][i % 4] = M[((size_t)i * Cout + k) * T + col];
    float t[2][4]; /* A^T m */
    for (int s = 0; s < 4; s++) {
        t[0][s] = m[0][s] + m[1][s] + m[2][s];
        t[1][s] = m[1][s] - m[2][s] - m[3][s];
    }
    uint h0 = (tile / tw) * 2, w0 = (tile % tw) * 2;
    __global float *yk = y + y_off + n * y_img + (size_t)k * Hout * Wout;
    for (int r = 0; r < 2; r++) {
        float out[2] = {t[r][0] + t[r][1] + t[r][2], t[r][1] - t[r][2] - t[r][3]};
        for (int s = 0; s < 2; s++)
            if (h0 + r < Hout && w0 + s < Wout)
                yk[(h0 + r) * Wout + w0 + s] = out[s];
    }
}
