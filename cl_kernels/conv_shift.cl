/* Implicit convolution for stride 1 as register-blocked products over shifted rows (NCHW).
 *
 * The input is copied once into a zero-padded tensor of Hp x Wp planes (Hp = P + (R-1)*dh,
 * Wp = Q + (S-1)*dw). On the padded output grid, where column j = p*Wp + q, the im2col row of
 * tap (c, r, s) is then the contiguous run of the padded image starting at
 * c*Hp*Wp + r*dh*Wp + s*dw: every row of B is the same plane seen at a shift, so B is read in
 * place with vector loads and never built. Columns with q >= Q are computed and not stored
 * (Wp - Q of every Wp); the plane is small enough to stay in cache for all its taps.
 *
 * clg_conv_shift_fwd    Y (m x P*Q per image) = A (m x taps) . B (taps x L), L = (P-1)*Wp + Q;
 *                       the forward pass, and backward-data as the forward of the padded dy
 *                       with flipped, transposed weights. Launch: (column tiles, row tiles, N).
 * clg_conv_shift_fwd_px the same with pixels as rows and channels as lanes (no waste on the
 *                       grid; for layers with many output channels, and for strided layers:
 *                       a pixel's row is a scalar read wherever it lies). Epilogue bits: 1
 *                       adds bias[k], 2 applies a ReLU.
 * clg_conv_shift_bwd_px backward-data of a strided layer: dx's pixels in phases, each phase a
 *                       stride-1 product with its own taps (below).
 * clg_conv_shift_wgrad  partial dW^T (taps x ldd) of a slice of images: A = the shifted rows
 *                       (only the P x Q pixels of the grid, any stride), B = dy as [PQ][ldd]
 *                       rows; a slice without images writes zeros; `accumulate` adds to what
 *                       the slice holds (the next chunk of images). Launch: (ldd/NR, row
 *                       tiles, slices).
 * Tunables: MR rows and NR (16 or 32) columns of the result per work-item, as in gemm.cl. */
#ifndef MR
#define MR 8
#endif
#ifndef NR
#define NR 32
#endif
#define NV (NR / 16)

__kernel void clg_conv_shift_fwd(uint m, uint L, uint Cin, uint R, uint S, uint dh, uint dw,
                                 uint Hp, uint Wp, uint Q,
                                 __global const float *A, ulong a_off, uint lda,
                                 __global const float *X, ulong x_off, ulong x_img,
                                 __global float *Y, ulong y_off, ulong y_img, uint ldy)
{
    uint tn = get_global_id(0), tm = get_global_id(1);
    size_t n = get_global_id(2);
    uint row0 = tm * MR, col0 = tn * NR, keep_from = col0;
    if (col0 >= L || row0 >= m)
        return; /* padding of a rounded-up launch */
    if (col0 + NR > L) /* last tile: shift left; its first columns belong to the previous one */
        /* L < NR reads into the slack after the padded input; sub_sat, not L > NR ? L - NR
           : 0, which LLVM turns into an intrinsic that oclgrind cannot run */
        col0 = sub_sat(L, (uint)NR);
    uint plane = Hp * Wp;
    const __global float *b = X + x_off + n * x_img + col0;
    const __global float *a[MR];
#pragma unroll
    for (int r = 0; r < MR; r++)
        a[r] = A + a_off + (size_t)min(row0 + (uint)r, m - 1) * lda;
    float16 acc[MR][NV];
    CLG_BLOCK_ZERO(acc);
    uint ap = 0;
    for (uint c = 0; c < Cin; c++)
        for (uint r = 0; r < R; r++) {
            const __global float *brow = b + c * plane + r * dh * Wp;
            for (uint s = 0; s < S; s++, brow += dw, ap++) {
                float16 bv[NV];
                CLG_BLOCK_LOAD(bv, brow);
#define A_ROW(i) a[i][ap]
                CLG_BLOCK_FMA(acc, bv, A_ROW);
#undef A_ROW
            }
        }
    /* Column j of the grid is output pixel (j / Wp, j % Wp) when j % Wp < Q. */
    int dst[NR];
    for (uint l = 0; l < NR; l++) {
        uint j = col0 + l, q = j % Wp;
        dst[l] = j >= keep_from && j < L && q < Q ? (int)((j / Wp) * Q + q) : -1;
    }
    __global float *y = Y + y_off + n * y_img;
#pragma unroll
    for (int r = 0; r < MR; r++) {
        if (row0 + (uint)r >= m)
            break;
        __global float *yr = y + (size_t)(row0 + (uint)r) * ldy;
#pragma unroll
        for (int v = 0; v < NV; v++) {
            float vals[16];
            vstore16(acc[r][v], 0, vals);
            for (uint l = 0; l < 16; l++)
                if (dst[v * 16 + l] >= 0)
                    yr[dst[v * 16 + l]] = vals[l];
        }
    }
}

/* acc[i] += a[i][off] * b (a: the pixels' pointers, named so by the caller) for count
 * channels, off moving by `plane` and b by `b_step` floats a channel: the pixel-row kernels'
 * products of one tap (channels innermost: a tap's channels are many, a 3x3 row's or a
 * phase's taps few). */
#define SHIFT_CHANNELS(acc, b, off, count, plane, b_step)                                     \
    for (uint ch_ = 0; ch_ < (count); ch_++, off += (plane), b += (b_step)) {                  \
        float16 bv_[NV];                                                                      \
        CLG_BLOCK_LOAD(bv_, b);                                                               \
        CLG_BLOCK_FMA(acc, bv_, SHIFT_A_PIXEL);                                               \
    }
#define SHIFT_A_PIXEL(i) a[i][off]

/* Pixel i's row of the block (its first `lanes` channels), channel l stored at y[l * ystep],
 * with bias[l] added (epilogue bit 1), then the activation of bits >> 1 (clg_epi). */
inline void shift_store_pixel(const float16 *row, __global float *y, size_t ystep, uint lanes,
                              __global const float *bias, uint epilogue, float relu_max)
{
    float vals[NR];
#pragma unroll
    for (int v = 0; v < NV; v++)
        vstore16(row[v], v, vals);
    for (uint l = 0; l < lanes; l++) {
        float out = vals[l];
        if (epilogue & 1)
            out += bias[l];
        out = clg_epi(epilogue >> 1, relu_max, out);
        y[l * ystep] = out;
    }
}

/* The same product with pixels as rows and channels as vector lanes: Y^T (P*Q x Kout) =
 * shifted rows^T . Wt (taps x ldk, channels zero-padded to whole tiles). Only real pixels are
 * computed (no Wp - Q waste), for layers with enough output channels to fill the lanes;
 * pixel (p, q) reads the grid from (p * sh, q * sw). Launch: (ldk / NR, pixel tiles, N). */
__kernel void clg_conv_shift_fwd_px(uint PQ, uint Q, uint Cin, uint R, uint S, uint dh, uint dw,
                                    uint sh, uint sw, uint Hp, uint Wp, uint Kout,
                                    __global const float *X, ulong x_off, ulong x_img,
                                    __global const float *Wt, uint ldk,
                                    __global float *Y, ulong y_off, ulong y_img,
                                    __global const float *bias, ulong bias_off, uint epilogue,
                                    float relu_max)
{
    uint tn = get_global_id(0), tm = get_global_id(1);
    size_t n = get_global_id(2);
    uint pix0 = tm * MR, col0 = tn * NR;
    if (pix0 >= PQ || col0 >= ldk)
        return;
    uint plane = Hp * Wp;
    const __global float *a[MR];
#pragma unroll
    for (int i = 0; i < MR; i++) { /* pixels past PQ repeat the last one, not stored */
        uint pix = min(pix0 + (uint)i, PQ - 1);
        a[i] = X + x_off + n * x_img + (pix / Q) * sh * Wp + pix % Q * sw;
    }
    float16 acc[MR][NV];
    CLG_BLOCK_ZERO(acc);
    for (uint r = 0; r < R; r++)
        for (uint s = 0; s < S; s++) {
            const __global float *b = Wt + (size_t)(r * S + s) * ldk + col0;
            uint off = r * dh * Wp + s * dw;
            SHIFT_CHANNELS(acc, b, off, Cin, plane, (size_t)R * S * ldk);
        }
    __global float *y = Y + y_off + n * y_img + (size_t)col0 * PQ;
    uint kn = min((uint)NR, Kout - col0);
#pragma unroll
    for (int i = 0; i < MR; i++) {
        uint pix = pix0 + (uint)i;
        if (pix >= PQ)
            break;
        shift_store_pixel(acc[i], y + pix, PQ, kn, bias + bias_off + col0, epilogue, relu_max);
    }
}

/* dx of a strided layer (dilation 1) with pixels as rows and input channels as lanes. Pixel
 * (h, w) of dx sums the taps r = ph + sh*u, s = pw + sw*v only, where ph = (h + pt) mod sh and
 * pw = (w + pl) mod sw (its phase), reading dy at (hh - u, ww - v), hh = (h + pt - ph) / sh,
 * ww likewise. So each phase is a stride-1 product with its own taps, and no zero of a
 * dilated dy is multiplied. Each work-item takes MR pixels of one phase (in order of hh, ww);
 * the phase's taps read D, dy padded by top = ceil(R/sh) - 1 rows and left = ceil(S/sw) - 1
 * columns into Hp x Wp planes. Wt: backward-data's flipped rows of taps (k, r', s') =
 * w[k][.][R-1-r'][S-1-s'], ldk lanes. A phase without taps (1x1 layers) stores zeros.
 * Launch: (ldk / NR, pixel tiles of the largest phase, N * sh * sw). */
__kernel void clg_conv_shift_bwd_px(uint H, uint W, uint Kin, uint R, uint S, uint sh, uint sw,
                                    uint pt, uint pl, uint top, uint left, uint Hp, uint Wp,
                                    uint Cout, __global const float *D, ulong d_off, ulong d_img,
                                    __global const float *Wt, uint ldk,
                                    __global float *Y, ulong y_off, ulong y_img)
{
    uint tn = get_global_id(0), tm = get_global_id(1), z = get_global_id(2);
    uint phases = sh * sw, ph = z % phases / sw, pw = z % sw;
    size_t n = z / phases;
    /* the phase's pixels: h = sh * hh + ph - pt, hh in [hh0, hh1) (likewise w) */
    int hh0 = max(0, ((int)pt - (int)ph + (int)sh - 1) / (int)sh);
    int hh1 = max(hh0, ((int)H + (int)pt - (int)ph + (int)sh - 1) / (int)sh);
    int ww0 = max(0, ((int)pl - (int)pw + (int)sw - 1) / (int)sw);
    int ww1 = max(ww0, ((int)W + (int)pl - (int)pw + (int)sw - 1) / (int)sw);
    uint wn = (uint)(ww1 - ww0), pixels = (uint)(hh1 - hh0) * wn;
    uint pix0 = tm * MR, col0 = tn * NR;
    if (pix0 >= pixels || col0 >= ldk)
        return;
    uint ru = R > ph ? (R - ph + sh - 1) / sh : 0, sv = S > pw ? (S - pw + sw - 1) / sw : 0;
    uint plane = Hp * Wp;
    const __global float *a[MR];
#pragma unroll
    for (int i = 0; i < MR; i++) { /* pixels past the phase's repeat its last, not stored */
        uint pix = min(pix0 + (uint)i, pixels - 1);
        uint hh = (uint)hh0 + pix / wn, ww = (uint)ww0 + pix % wn;
        a[i] = D + d_off + n * d_img + (size_t)(hh + top) * Wp + ww + left;
    }
    float16 acc[MR][NV];
    CLG_BLOCK_ZERO(acc);
    for (uint u = 0; u < ru; u++)
        for (uint v = 0; v < sv; v++) {
            const __global float *b =
                Wt + ((size_t)(R - 1 - ph - sh * u) * S + S - 1 - pw - sw * v) * ldk + col0;
            int off = -(int)(u * Wp) - (int)v;
            SHIFT_CHANNELS(acc, b, off, Kin, (int)plane, (size_t)R * S * ldk);
        }
    __global float *y = Y + y_off + n * y_img + (size_t)col0 * H * W;
    uint cn = min((uint)NR, Cout - col0);
#pragma unroll
    for (int i = 0; i < MR; i++) {
        uint pix = pix0 + (uint)i;
        if (pix >= pixels)
            break;
        uint h = sh * ((uint)hh0 + pix / wn) + ph - pt, w = sw * ((uint)ww0 + pix % wn) + pw - pl;
        shift_store_pixel(acc[i], y + (size_t)h * W + w, (size_t)H * W, cn, Wt, 0, 0.0f);
    }
}

__kernel void clg_conv_shift_wgrad(uint m, uint taps, uint ones, uint P, uint Q, uint R, uint S,
                                   uint dh, uint dw, uint sh, uint sw, uint Hp, uint Wp, uint N,
                                   uint per_slice,
                                   __global const float *X, ulong x_off, ulong x_img,
                                   __global const float *D, uint ldd,
                                   __global float *part, ulong part_off, uint accumulate)
{
    uint tn = get_global_id(0), tm = get_global_id(1), slice = get_global_id(2);
    uint row0 = tm * MR, col0 = tn * NR;
    if (row0 >= m || col0 >= ldd)
        return;
    uint plane = Hp * Wp;
    /* Each row is a tap (c, r, s): its shift into the padded image; row `taps` (when m >
     * taps) reads the ones after the planes, so that it sums dy: the bias gradient. Rows past
     * m repeat the last one and are not stored. */
    uint shift[MR];
#pragma unroll
    for (int i = 0; i < MR; i++) {
        uint t = min(row0 + (uint)i, m - 1);
        uint s = t % S, r = (t / S) % R, c = t / (R * S);
        shift[i] = t < taps ? c * plane + r * dh * Wp + s * dw : ones;
    }
    float16 acc[MR][NV];
    CLG_BLOCK_ZERO(acc);
    uint n_end = min(N, (slice + 1) * per_slice);
    for (uint n = slice * per_slice; n < n_end; n++) {
        const __global float *d = D + (size_t)n * P * Q * ldd + col0;
        for (uint p = 0; p < P; p++) {
            const __global float *x = X + x_off + n * x_img + p * sh * Wp;
            for (uint q = 0, qs = 0; q < Q; q++, qs += sw, d += ldd) {
                float16 bv[NV];
                CLG_BLOCK_LOAD(bv, d);
#define A_TAP(i) x[shift[i] + qs]
                CLG_BLOCK_FMA(acc, bv, A_TAP);
#undef A_TAP
            }
        }
    }
    __global float *out = part + part_off + ((size_t)slice * m + row0) * ldd + col0;
#pragma unroll
    for (int i = 0; i < MR; i++) {
        if (row0 + (uint)i < m) { /* a break here kept LLVM from unrolling the loop, and
                                     clang's warning reached the user's terminal */
#pragma unroll
            for (int v = 0; v < NV; v++) {
                __global float *o = out + (size_t)i * ldd;
                CLG_STORE16(accumulate ? vload16(v, o) + acc[i][v] : acc[i][v], o + 16 * v);
            }
        }
    }
}

/* dst[n][c][hp][wp] = src[n][c][hp - top][wp - left], zero outside src (top and left may be
 * negative: rows and columns of src are then skipped). dst planes are Hp x Wp, followed by
 * `ones` rows of 1. One work-item per (dst row of any channel, image). */
__kernel void clg_conv_shift_pad(__global const float *src, ulong src_off, ulong src_img,
                                 uint C, uint H, uint W, int top, int left, uint Hp, uint Wp,
                                 uint ones, __global float *dst, ulong dst_img)
{
    uint row = get_global_id(0), n = get_global_id(1);
    if (row >= C * Hp + ones)
        return;
    uint c = row / Hp, hp = row % Hp;
    __global float *out = dst + n * dst_img + (size_t)row * Wp;
    int h = (int)hp - top;
    if (row >= C * Hp || h < 0 || h >= (int)H) {
        float v = row >= C * Hp ? 1.0f : 0.0f;
        for (uint w = 0; w < Wp; w++)
            out[w] = v;
        return;
    }
    const __global float *in = src + src_off + n * src_img + ((size_t)c * H + (uint)h) * W;
    int lo = clamp(left, 0, (int)Wp), hi = clamp(left + (int)W, lo, (int)Wp);
    for (int w = 0; w < lo; w++)
        out[w] = 0.0f;
    for (int w = lo; w < hi; w++)
        out[w] = in[w - left];
    for (int w = hi; w < (int)Wp; w++)
        out[w] = 0.0f;
}

/* Weights as rows of taps for one group: wt[t][o] (ldk columns, o >= outs zero) with
 * t = (i*R + r)*S + s. Forward (flip 0): o = k, i = c, wt = w[k][c][r][s]. Backward-data
 * (flip 1): o = c, i = k, wt = w[k][c][R-1-r][S-1-s]. rows 0: the transposed layout
 * wt[o][t] instead (ldk = taps), for clg_conv_shift_fwd. One work-item per (t, o). */
__kernel void clg_conv_shift_weights(__global const float *w, ulong w_off, uint Kg, uint Cg,
                                     uint RS, uint flip, uint rows, uint ldk,
                                     __global float *wt)
{
    uint t = get_global_id(0), o = get_global_id(1);
    uint ins = flip ? Kg : Cg, outs = flip ? Cg : Kg;
    if (t >= ins * RS || o >= (rows ? ldk : outs))
        return;
    uint i = t / RS, rs = t % RS;
    float v = 0.0f;
    if (o < outs)
        v = flip ? w[w_off + ((size_t)i * Cg + o) * RS + (RS - 1 - rs)]
                 : w[w_off + ((size_t)o * Cg + i) * RS + rs];
    wt[rows ? (size_t)t * ldk + o : (size_t)o * ins * RS + t] = v;
}

/* The weight gradient's B: d[n][pq][k] = dy[n][k][pq], columns k in [Kg, ldd) zero. One
 * work-item per (pixel, image), reading a channel's pixels side by side across work-items. */
__kernel void clg_conv_shift_dy(__global const float *dy, ulong dy_off, ulong dy_img, uint Kg,
                                uint PQ, uint ldd, __global float *d)
{
    uint pq = get_global_id(0), n = get_global_id(1);
    if (pq >= PQ)
        return;
    const __global float *in = dy + dy_off + n * dy_img + pq;
    __global float *out = d + ((size_t)n * PQ + pq) * ldd;
    for (uint k = 0; k < Kg; k++)
        out[k] = in[(size_t)k * PQ];
    for (uint k = Kg; k < ldd; k++)
        out[k] = 0.0f;
}

/* dW[k][t] = sum over slices of part[slice][t][k], slices in order; row t = taps (when m >
 * taps) is the bias gradient db[k]. */
__kernel void clg_conv_shift_wsum(__global const float *part, uint slices, uint m, uint taps,
                                  uint ldd, uint Kg, __global float *dw, ulong dw_off,
                                  __global float *db, ulong db_off)
{
    uint t = get_global_id(0), k = get_global_id(1);
    if (t >= m || k >= Kg)
        return;
    float sum = 0.0f;
    for (uint s = 0; s < slices; s++)
        sum += part[((size_t)s * m + t) * ldd + k];
    if (t < taps)
        dw[dw_off + (size_t)k * taps + t] = sum;
    else
        db[db_off + k] = sum;
}
