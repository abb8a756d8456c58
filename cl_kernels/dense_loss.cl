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

/* The sample's loss: sum over its labelled pixels of w[label] * (logsumexp - z[label]), divided
 * by HW (every pixel, labelled or not); labels < 0 are ignored. has_w 0: every weight 1. */
__kernel __attribute__((reqd_work_group_size(DENSE_LOCAL, 1, 1)))
void clg_pixel_xent_fwd(__global const float *z, ulong zo, __global const int *labels, uint N,
                        uint K, uint HW, __global const float *w, ulong wo,
                        uint has_w, __global float *out)
{
    __local float acc[DENSE_LOCAL];
    uint n = get_group_id(0), j = get_local_id(0);
    const __global float *zs = z + zo + (size_t)n * K * HW;
    const __global int *ls = labels + (size_t)n * HW;
    float loss = 0.0f, hits = 0.0f;
    for (uint p = j; p < HW; p += DENSE_LOCAL) {
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

/* dz = scale * w[label] / HW * (softmax - onehot(label)) per pixel; 0 for ignored pixels.
 * Every logit of a pixel is read before any is written: dz may be z. */
__kernel void clg_pixel_xent_bwd(__global const float *z, ulong zo, __global const int *labels,
                                 ulong pixels, uint K, uint HW, __global const float *w,
                                 ulong wo, uint has_w, float scale, __global float *dz, ulong dzo)
{
    CLG_FOR_EACH(i, pixels) {
        size_t n = i / HW;
        uint p = (uint)(i - n * HW);
        const __global float *zs = z + zo + n * K * HW;
        __global float *ds = dz + dzo + n * K * HW;
        int label = labels[i];
        if (label < 0) {
            for (uint k = 0; k < K; k++)
                ds[(size_t)k * HW + p] = 0.0f;
            continue;
        }
        float m, s;
        uint arg;
        clg_pixel_stats(zs, K, HW, p, &m, &arg, &s);
        float a = scale * (has_w ? w[wo + label] : 1.0f) / (float)HW;
        for (uint k = 0; k < K; k++) {
            float q = exp(zs[(size_t)k * HW + p] - m) / (1.0f + s);
            ds[(size_t)k * HW + p] = a * (q - ((int)k == label ? 1.0f : 0.0f));
        }
    }
}
