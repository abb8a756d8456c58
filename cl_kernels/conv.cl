/* Convolution helpers for the im2col + GEMM algorithm (NCHW, row-major). Geometry: input
 * C x H x W per image (a group's Cg channels start at channel c0), kernel R x S, output P x Q,
 * stride sh/sw, top/left padding pt/pl, dilation dh/dw.
 *
 * The column matrix holds, for each image n of a chunk, each (c, r, s) = row crs = (c*R + r)*S
 * + s and each output pixel pq = p*Q + q, the input value under that kernel tap (0 in the
 * padding) at cols[n*s_n + crs*s_crs + pq]: s_n = CRS*PQ, s_crs = PQ lays images one after
 * the other (for batched GEMMs per image); s_n = PQ, s_crs = nb*PQ puts them side by side (one
 * GEMM whose k runs over every pixel of the chunk, for the weight gradient).
 * im2col and col2im give each work-item a whole row, so that the inner loops are contiguous. */

__kernel void clg_conv_im2col(__global const float *x, ulong x_off, ulong x_img,
                              uint Cg, uint H, uint W, uint R, uint S, uint P, uint Q,
                              uint sh, uint sw, uint pt, uint pl, uint dh, uint dw,
                              __global float *cols, ulong s_n, ulong s_crs)
{
    /* One work-item per (tap crs, image): its P x Q values row by row, each row split into the
     * padding on the left, a strided (contiguous for stride 1) copy, and the padding on the
     * right, so that the copies vectorise. */
    uint crs = get_global_id(0), n = get_global_id(1);
    if (crs >= Cg * R * S)
        return;
    uint s = crs % S, r = (crs / S) % R, c = crs / (R * S);
    const __global float *plane = x + x_off + n * x_img + (size_t)c * H * W;
    __global float *out = cols + n * s_n + crs * s_crs;
    int w0 = (int)(s * dw) - (int)pl;
    /* Output columns q with 0 <= w0 + q*sw < W. */
    int qlo = w0 >= 0 ? 0 : min((int)Q, (-w0 + (int)sw - 1) / (int)sw);
    int qhi = w0 >= (int)W ? 0 : min((int)Q, ((int)W - 1 - w0) / (int)sw + 1);
    qhi = max(qhi, qlo);
    for (uint p = 0; p < P; p++, out += Q) {
        int h = (int)(p * sh + r * dh) - (int)pt;
        if (h < 0 || h >= (int)H) {
            for (uint q = 0; q < Q; q++)
                out[q] = 0.0f;
            continue;
        }
        const __global float *row = plane + (size_t)h * W + w0;
        for (int q = 0; q < qlo; q++)
            out[q] = 0.0f;
        if (sw == 1)
            for (int q = qlo; q < qhi; q++)
                out[q] = row[q];
        else if (sw == 2) { /* eight outputs from two vector loads (a gather was scalar) */
            int q = qlo;
            for (; q + 8 <= qhi && w0 + 2 * q + 16 <= (int)W; q += 8) {
                float16 v = vload16(0, row + 2 * q);
                vstore8(v.even, 0, out + q);
            }
            for (; q < qhi; q++)
                out[q] = row[2 * q];
        } else {
            for (int q = qlo; q < qhi; q++)
                out[q] = row[q * (int)sw];
        }
        for (int q = qhi; q < (int)Q; q++)
            out[q] = 0.0f;
    }
}

/* dx of a group's channels from the column gradient: each input element gathers every tap
 * that read it (a fixed order, no atomics: results do not depend on scheduling). */
__kernel void clg_conv_col2im(__global const float *cols, ulong s_n, ulong s_crs,
                              uint Cg, uint H, uint W, uint R, uint S, uint P, uint Q,
                              uint sh, uint sw, uint pt, uint pl, uint dh, uint dw,
                              __global float *dx, ulong dx_off, ulong dx_img)
{
    /* One work-item per (input row h, channel, image), gathering along the row. */
    uint h = get_global_id(0), c = get_global_id(1), n = get_global_id(2);
    if (h >= H || c >= Cg)
        return;
    __global float *out = dx + dx_off + n * dx_img + ((size_t)c * H + h) * W;
    for (uint w = 0; w < W; w++)
        out[w] = 0.0f;
    for (uint r = 0; r < R; r++) {
        int ph = (int)(h + pt) - (int)(r * dh);
        if (ph < 0 || ph % (int)sh != 0 || ph / (int)sh >= (int)P)
            continue;
        uint p = (uint)ph / sh;
        for (uint s = 0; s < S; s++) {
            const __global float *src = cols + n * s_n + ((size_t)(c * R + r) * S + s) * s_crs + (size_t)p * Q;
            int off = (int)pl - (int)(s * dw); /* input column w reads output column (w + off) / sw */
            if (sw == 1) { /* a contiguous range: a plain vector add */
                int wlo = max(0, -off), whi = min((int)W, (int)Q - off);
                for (int w = wlo; w < whi; w++)
                    out[w] += src[w + off];
                continue;
            }
            /* strided: output column q feeds input column q * sw - off; the range of q whose
             * column lies in [0, W), so that no element needs a division */
            int step = (int)sw, qlo = off > 0 ? (off + step - 1) / step : 0;
            int qhi = (int)W + off > 0 ? min((int)Q, ((int)W + off + step - 1) / step) : 0;
            for (int q = qlo; q < qhi; q++)
                out[q * step - off] += src[q];
        }
    }
}

/* dy of a group's Kg channels, [nb][K][PQ] -> [nb*PQ][Kg] (pixels as rows), the B operand of
 * the weight-gradient GEMM. */
__kernel void clg_conv_gather_dy(__global const float *dy, ulong dy_off, ulong dy_img,
                                 uint Kg, uint PQ, uint nb, __global float *out)
{
    uint pq = get_global_id(0), k = get_global_id(1), n = get_global_id(2);
    if (pq >= PQ || k >= Kg)
        return;
    out[((size_t)n * PQ + pq) * Kg + k] = dy[dy_off + n * dy_img + (size_t)k * PQ + pq];
}

/* dst (cols x rows) = src (rows x cols)^T, written at dst + dst_off. */
__kernel void clg_conv_transpose(__global const float *src, uint rows, uint cols,
                                 __global float *dst, ulong dst_off)
{
    uint c = get_global_id(0), r = get_global_id(1);
    if (c >= cols || r >= rows)
        return;
    dst[dst_off + (size_t)c * rows + r] = src[(size_t)r * cols + c];
}

/* The same plus bias[r] on each of src's rows: a fully connected layer's y = (w . x^T)^T + b. */
__kernel void clg_transpose_bias(__global const float *src, uint rows, uint cols,
                                 __global float *dst, ulong dst_off, __global const float *bias,
                                 ulong b_off)
{
    uint c = get_global_id(0), r = get_global_id(1);
    if (c >= cols || r >= rows)
        return;
    dst[dst_off + (size_t)c * rows + r] = src[(size_t)r * cols + c] + bias[b_off + r];
}

/* Implicit (fused) convolution: no column matrix, the input is read in place.
 * Forward: each work-item computes CB output channels of one output pixel; dimension 0 runs
 * over pixels so that CPUs vectorise across them. CB is a tunable (-DCB). */
#ifndef CB
#define CB 8
#endif

__kernel void clg_conv_implicit_fwd(__global const float *x, ulong x_off, __global const float *w,
                                    ulong w_off, __global float *y, ulong y_off,
                                    uint C, uint H, uint W, uint K, uint Cg, uint Kg,
                                    uint R, uint S, uint P, uint Q, uint sh, uint sw,
                                    uint pt, uint pl, uint dh, uint dw)
{
    uint pq = get_global_id(0), kb = get_global_id(1), n = get_global_id(2);
    uint per_group = (Kg + CB - 1) / CB, grp = kb / per_group; /* blocks never cross groups */
    uint k0 = grp * Kg + (kb % per_group) * CB;
    if (pq >= P * Q || grp >= K / Kg)
        return;
    uint p = pq / Q, q = pq % Q;
    uint kend = min(k0 + CB, (grp + 1) * Kg);
    float acc[CB];
    for (uint j = 0; j < CB; j++)
        acc[j] = 0.0f;
    const __global float *xn = x + x_off + ((size_t)n * C + grp * Cg) * H * W;
    for (uint c = 0; c < Cg; c++)
        for (uint r = 0; r < R; r++) {
            int h = (int)(p * sh + r * dh) - (int)pt;
            if (h < 0 || h >= (int)H)
                continue;
            for (uint s = 0; s < S; s++) {
                int ww = (int)(q * sw + s * dw) - (int)pl;
                if (ww < 0 || ww >= (int)W)
                    continue;
                float xv = xn[((size_t)c * H + (uint)h) * W + (uint)ww];
                const __global float *wp = w + w_off + (((size_t)k0 * Cg + c) * R + r) * S + s;
                for (uint j = 0; j < kend - k0; j++)
                    acc[j] = fma(wp[(size_t)j * Cg * R * S], xv, acc[j]);
            }
        }
    for (uint j = 0; j < kend - k0; j++)
        y[y_off + ((size_t)n * K + k0 + j) * P * Q + pq] = acc[j];
}

/* Backward data: each work-item computes CB input channels of one input pixel from every
 * output pixel whose window covers it. */
__kernel void clg_conv_implicit_bwd_data(__global const float *dy, ulong dy_off,
                                         __global const float *w, ulong w_off,
                                         __global float *dx, ulong dx_off,
                                         uint C, uint H, uint W, uint K, uint Cg, uint Kg,
                                         uint R, uint S, uint P, uint Q, uint sh, uint sw,
                                         uint pt, uint pl, uint dh, uint dw)
{
    uint hw = get_global_id(0), cb = get_global_id(1), n = get_global_id(2);
    uint per_group = (Cg + CB - 1) / CB, grp = cb / per_group;
    uint cl0 = (cb % per_group) * CB, c0 = grp * Cg + cl0;
    if (hw >= H * W || grp >= C / Cg)
        return;
    uint cend = min(c0 + CB, (grp + 1) * Cg);
    int h = (int)(hw / W) + (int)pt, wpos = (int)(hw % W) + (int)pl;
    float acc[CB];
    for (uint j = 0; j < CB; j++)
        acc[j] = 0.0f;
    for (uint k = grp * Kg; k < (grp + 1) * Kg; k++) {
        const __global float *dyk = dy + dy_off + ((size_t)n * K + k) * P * Q;
        for (uint r = 0; r < R; r++) {
            int ph = h - (int)(r * dh);
            if (ph < 0 || ph % (int)sh != 0 || ph / (int)sh >= (int)P)
                continue;
            for (uint s = 0; s < S; s++) {
                int qw = wpos - (int)(s * dw);
                if (qw < 0 || qw % (int)sw != 0 || qw / (int)sw >= (int)Q)
                    continue;
                float g = dyk[(uint)(ph / (int)sh) * Q + (uint)(qw / (int)sw)];
                const __global float *wp = w + w_off + (((size_t)k * Cg + cl0) * R + r) * S + s;
                for (uint j = 0; j < cend - c0; j++)
                    acc[j] = fma(wp[(size_t)j * R * S], g, acc[j]);
            }
        }
    }
    for (uint j = 0; j < cend - c0; j++)
        dx[dx_off + ((size_t)n * C + c0 + j) * H * W + hw] = acc[j];
}

/* Backward weights: one work-item per weight, summing over images and output pixels in a
 * fixed order. */
__kernel void clg_conv_implicit_bwd_weights(__global const float *x, ulong x_off,
                                            __global const float *dy, ulong dy_off,
                                            __global float *dw_out, ulong dw_off, uint N,
                                            uint C, uint H, uint W, uint K, uint Cg, uint Kg,
                                            uint R, uint S, uint P, uint Q, uint sh, uint sw,
                                            uint pt, uint pl, uint dh, uint dw)
{
    uint crs = get_global_id(0), k = get_global_id(1);
    if (crs >= Cg * R * S || k >= K)
        return;
    uint s = crs % S, r = (crs / S) % R, c = crs / (R * S), grp = k / Kg;
    float total = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + x_off + ((size_t)n * C + grp * Cg + c) * H * W;
        const __global float *dyk = dy + dy_off + ((size_t)n * K + k) * P * Q;
        float part = 0.0f;
        for (uint p = 0; p < P; p++) {
            int h = (int)(p * sh + r * dh) - (int)pt;
            if (h < 0 || h >= (int)H)
                continue;
            for (uint q = 0; q < Q; q++) {
                int ww = (int)(q * sw + s * dw) - (int)pl;
                if (ww >= 0 && ww < (int)W)
                    part = fma(dyk[p * Q + q], xc[(uint)h * W + (uint)ww], part);
            }
        }
        total += part;
    }
    dw_out[dw_off + (size_t)k * Cg * R * S + crs] = total;
}
