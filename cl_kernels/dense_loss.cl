/* Losses over every output value (loss.h): regression (half mean squared error, mean absolute
 * error) and per-pixel softmax cross-entropy. Forward: a work-group of DENSE_LOCAL items per
 * sample, each taking every DENSE_LOCAL-th value or pixel (neighbouring items read neighbouring
 * values), summed by clg_group_sum in a fixed order; out[n] is the sample's loss and out[N + n]
 * its count of correct pixels (exact in float below 2^24). Backward: a work-item per value or
 * pixel. */
#define DENSE_LOCAL 64

/* mode 0: 0.5 * mean of (y - t)^2 over the sample's R values; 1: mean of |y - t|. */
__kernel __attribute__((reqd_work_group_size(DENSE_LOCAL, 1, 1)))
void clg_regress_fwd(__global const float *y, ulong yo, __global const float *t, uint N, uint R,
                     uint mode, __global float *out)
{
    __local float acc[DENSE_LOCAL];
    uint n = get_group_id(0), j = get_local_id(0);
    const __global float *ys = y + yo + (size_t)n * R, *ts = t + (size_t)n * R;
    float part = 0.0f;
    for (uint r = j; r < R; r += DENSE_LOCAL) {
        float d = ys[r] - ts[r];
        part += mode ? fabs(d) : d * d;
    }
    float total = clg_group_sum(acc, j, DENSE_LOCAL, part);
    if (j == 0) {
        out[n] = (mode ? total : 0.5f * total) / (float)R;
        out[N + n] = 0.0f;
    }
}

/* dy = scale * d loss / dy: (y - t) / R, or sign(y - t) / R (0 where equal). dy may be y. */
__kernel void clg_regress_bwd(__global const float *y, ulong yo, __global const float *t,
                              ulong count, uint R, uint mode, float scale, __global float *dy,
                              ulong dyo)
{
    float k = scale / (float)R;
    CLG_FOR_EACH(i, count) {
        float d = y[yo + i] - t[i];
        dy[dyo + i] = k * (mode ? (float)((d > 0.0f) - (d < 0.0f)) : d);
    }
}

/* Pixel p of a sample's K x HW logits zs: the first largest class, its value and the sum of
 * exp(z - max) over the other classes (the largest's term is 1: log1p keeps a confident
 * pixel's small loss accurate, where log of a sum near 1 would round it away). */
void clg_pixel_stats(const __global float *zs, uint K, uint HW, uint p, float *m_out,
                     uint *arg_out, float *s_out)
{
    float m = zs[p];
    uint arg = 0;
    for (uint k = 1; k < K; k++) {
        float v = zs[(size_t)k * HW + p];
        if (v > m) {
            m = v;
            arg = k;
        }
    }
    float s = 0.0f;
    for (uint k = 0; k < K; k++)
        s += k == arg ? 0.0f : exp(zs[(size_t)k * HW + p] - m);
    *m_out = m;
    *arg_out = arg;
    *s_out = s;
}

/* Eight neighbouring pixels at once (p: the first, all < HW), in vectors, so that exp and
 * the class loop vectorise on CPUs: each pixel's largest logit m and first class at it arg,
 * the sum s of exp(z - m) over its other classes, and its label's logit zl and weight wl. */
void clg_pixel_stats8(const __global float *zs, uint K, uint HW, uint p, int8 label,
                      const __global float *w, uint has_w, float8 *m_out, int8 *arg_out,
                      float8 *s_out, float8 *zl_out, float8 *wl_out)
{
    float8 m = vload8(0, zs + p), zl = m, wl = has_w ? (float8)(w[0]) : (float8)(1.0f);
    int8 arg = (int8)(0);
    for (uint k = 1; k < K; k++) {
        float8 v = vload8(0, zs + (size_t)k * HW + p);
        int8 gt = v > m, is = label == (int8)(k);
        m = select(m, v, gt);
        arg = select(arg, (int8)(k), gt);
        zl = select(zl, v, is);
        wl = has_w ? select(wl, (float8)(w[k]), is) : wl;
    }
    float8 s = (float8)(0.0f);
    for (uint k = 0; k < K; k++) {
        float8 e = exp(vload8(0, zs + (size_t)k * HW + p) - m);
        s += select(e, (float8)(0.0f), arg == (int8)(k));
    }
    *m_out = m, *arg_out = arg, *s_out = s, *zl_out = zl, *wl_out = wl;
}

/* The sample's loss: sum over its labelled pixels of w[label] * (logsumexp - z[label]), divided
 * by HW (every pixel, labelled or not); labels < 0 are ignored. has_w 0: every weight 1. Items
 * take runs of 8 pixels (the rest one by one). */
__kernel __attribute__((reqd_work_group_size(DENSE_LOCAL, 1, 1)))
void clg_pixel_xent_fwd(__global const float *z, ulong zo, __global const int *labels, uint N,
                        uint K, uint HW, __global const float *w, ulong wo,
                        uint has_w, __global float *out)
{
    __local float acc[DENSE_LOCAL];
    uint n = get_group_id(0), j = get_local_id(0), runs = HW / 8;
    const __global float *zs = z + zo + (size_t)n * K * HW;
    const __global int *ls = labels + (size_t)n * HW;
    float loss = 0.0f, hits = 0.0f;
    for (uint r = j; r < runs; r += DENSE_LOCAL) {
        int8 label = vload8(0, ls + 8 * r), valid = label >= (int8)(0);
        float8 m, s, zl, wl;
        int8 arg;
        clg_pixel_stats8(zs, K, HW, 8 * r, label, w + wo, has_w, &m, &arg, &s, &zl, &wl);
        float8 l = select((float8)(0.0f), wl * (log1p(s) + (m - zl)), valid);
        float8 h = select((float8)(0.0f), (float8)(1.0f), valid & (arg == label));
        loss += (l.s0 + l.s1) + (l.s2 + l.s3) + ((l.s4 + l.s5) + (l.s6 + l.s7));
        hits += (h.s0 + h.s1) + (h.s2 + h.s3) + ((h.s4 + h.s5) + (h.s6 + h.s7));
    }
    for (uint p = 8 * runs + j; p < HW; p += DENSE_LOCAL) {
        int label = ls[p];
        if (label < 0)
            continue;
        float m, s;
        uint arg;
        clg_pixel_stats(zs, K, HW, p, &m, &arg, &s);
        float wl = has_w ? w[wo + label] : 1.0f;
        loss += wl * (log1p(s) + (m - zs[(size_t)label * HW + p]));
        hits += (int)arg == label ? 1.0f : 0.0f;
    }
    float total = clg_group_sum(acc, j, DENSE_LOCAL, loss);
    float correct = clg_group_sum(acc, j, DENSE_LOCAL, hits);
    if (j == 0) {
        out[n] = total / (float)HW;
        out[N + n] = correct;
    }
}

/* dz = scale * w[label] / HW * (softmax - onehot(label)) per pixel; 0 for ignored pixels. A
 * work-item per run of 8 pixels (id 0; the last run may be shorter) of a sample (id 1), in
 * vectors. exp(z - max) goes to dz and is scaled there: each logit is read before its gradient
 * is written, so dz may be z. */
__kernel void clg_pixel_xent_bwd(__global const float *z, ulong zo, __global const int *labels,
                                 uint K, uint HW, __global const float *w, ulong wo, uint has_w,
                                 float scale, __global float *dz, ulong dzo)
{
    uint p = 8 * get_global_id(0), n = get_global_id(1);
    if (p >= HW)
        return;
    size_t plane0 = (size_t)n * K * HW;
    const __global float *zs = z + zo + plane0;
    __global float *ds = dz + dzo + plane0;
    const __global int *ls = labels + (size_t)n * HW;
    float k_hw = scale / (float)HW;
    if (p + 8 <= HW) {
        int8 label = vload8(0, ls + p);
        float8 m = vload8(0, zs + p), wl = (float8)(has_w ? 0.0f : 1.0f);
        for (uint k = 1; k < K; k++)
            m = fmax(m, vload8(0, zs + (size_t)k * HW + p));
        float8 s = (float8)(0.0f);
        for (uint k = 0; k < K; k++) {
            float8 e = exp(vload8(0, zs + (size_t)k * HW + p) - m);
            vstore8(e, 0, ds + (size_t)k * HW + p);
            s += e;
            wl = has_w ? select(wl, (float8)(w[wo + k]), label == (int8)(k)) : wl;
        }
        float8 a = select((float8)(0.0f), k_hw * wl, label >= (int8)(0)), c = a / s;
        for (uint k = 0; k < K; k++) {
            __global float *at = ds + (size_t)k * HW + p;
            vstore8(vload8(0, at) * c - select((float8)(0.0f), a, label == (int8)(k)), 0, at);
        }
        return;
    }
    for (; p < HW; p++) { /* the last, short run */
        int label = ls[p];
        float m = zs[p];
        for (uint k = 1; k < K; k++)
            m = fmax(m, zs[(size_t)k * HW + p]);
        float s = 0.0f;
        for (uint k = 0; k < K; k++) {
            float e = exp(zs[(size_t)k * HW + p] - m);
            ds[(size_t)k * HW + p] = e;
            s += e;
        }
        float a = label < 0 ? 0.0f : k_hw * (has_w ? w[wo + label] : 1.0f), c = a / s;
        for (uint k = 0; k < K; k++)
            ds[(size_t)k * HW + p] = ds[(size_t)k * HW + p] * c - ((int)k == label ? a : 0.0f);
    }
}
