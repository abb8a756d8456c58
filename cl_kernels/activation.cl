/* Channel bias (NCHW, K channels of PQ pixels) and elementwise activations with their
 * derivatives, one element per work-item (CPUs vectorise across work-items). ACT: 0 relu,
 * 1 leaky relu, 2 elu, 3 sigmoid, 4 tanh, 5 clip to [alpha, beta], 6 hard sigmoid
 * clamp(alpha x + beta, 0, 1), 7 hard swish x * clamp(x / 6 + 1 / 2, 0, 1), 8 silu
 * x * sigmoid(x) (clgrad/activation.h). The sigmoid (common.cl) is the one convolutions'
 * epilogues apply. */

float clg_act(uint act, float alpha, float beta, float x)
{
    switch (act) {
    case 0: return x > 0.0f ? x : 0.0f;
    case 1: return x > 0.0f ? x : alpha * x;
    case 2: return x > 0.0f ? x : alpha * expm1(x);
    case 3: return clg_sigmoid(x);
    case 4: return tanh(x);
    case 5: return fmin(fmax(x, alpha), beta);
    case 6: return clamp(fma(alpha, x, beta), 0.0f, 1.0f);
    case 7: return x * clamp(fma(x, 1.0f / 6.0f, 0.5f), 0.0f, 1.0f);
    default: return x * clg_sigmoid(x);
    }
}

/* f'(x) from x (relu family, clip, the hard forms, silu) or from y = f(x) (sigmoid, tanh).
 * At the ends of the clipped forms the flat side's 0, as PyTorch's hardtanh and hardswish. */
float clg_act_grad(uint act, float alpha, float beta, float x, float y)
{
    switch (act) {
    case 0: return x > 0.0f ? 1.0f : 0.0f;
    case 1: return x > 0.0f ? 1.0f : alpha;
    case 2: return x > 0.0f ? 1.0f : y + alpha;
    case 3: return y * (1.0f - y);
    case 4: return 1.0f - y * y;
    case 5: return x > alpha && x < beta ? 1.0f : 0.0f;
    case 6: {
        float t = fma(alpha, x, beta);
        return t > 0.0f && t < 1.0f ? alpha : 0.0f;
    }
    case 7: return x <= -3.0f ? 0.0f : x >= 3.0f ? 1.0f : fma(x, 1.0f / 3.0f, 0.5f);
    default: {
        float s = clg_sigmoid(x);
        return s * fma(x, 1.0f - s, 1.0f);
    }
    }
}

/* The same 16 values at a time (CPUs: POCL left the per-element form of the functions with
 * exp scalar, SiLU at 0.2 G values/s); the sigmoid is common.cl's. */
inline float16 clg_act16(uint act, float alpha, float beta, float16 x)
{
    switch (act) {
    case 0: return fmax(x, 0.0f);
    case 1: return select(alpha * x, x, isgreater(x, 0.0f));
    case 2: return select(alpha * expm1(x), x, isgreater(x, 0.0f));
    case 3: return clg_sigmoid16(x);
    case 4: return tanh(x);
    case 5: return fmin(fmax(x, alpha), beta);
    case 6: return clamp(fma((float16)(alpha), x, (float16)(beta)), 0.0f, 1.0f);
    case 7: return x * clamp(fma(x, (float16)(1.0f / 6.0f), (float16)(0.5f)), 0.0f, 1.0f);
    default: return x * clg_sigmoid16(x);
    }
}

inline float16 clg_act_grad16(uint act, float alpha, float beta, float16 x, float16 y)
{
    const float16 one = 1.0f, zero = 0.0f;
    switch (act) {
    case 0: return select(zero, one, isgreater(x, 0.0f));
    case 1: return select((float16)(alpha), one, isgreater(x, 0.0f));
    case 2: return select(y + alpha, one, isgreater(x, 0.0f));
    case 3: return y * (1.0f - y);
    case 4: return 1.0f - y * y;
    case 5: return select(zero, one, isgreater(x, alpha) & isless(x, beta));
    case 6: {
        float16 t = fma((float16)(alpha), x, (float16)(beta));
        return select(zero, (float16)(alpha), isgreater(t, 0.0f) & isless(t, 1.0f));
    }
    case 7: {
        float16 mid = fma(x, (float16)(1.0f / 3.0f), (float16)(0.5f));
        return select(select(mid, one, isgreaterequal(x, 3.0f)), zero, islessequal(x, -3.0f));
    }
    default: {
        float16 sg = clg_sigmoid16(x);
        return sg * fma(x, 1.0f - sg, one);
    }
    }
}

/* CPUs: 16 values a work-item (the last work-item's rest one at a time). */
__kernel void clg_act_fwd16(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                            ulong n, uint act, float alpha, float beta)
{
    size_t i = get_global_id(0) * 16;
    if (i + 16 <= n) {
        CLG_STORE16(clg_act16(act, alpha, beta, vload16(0, x + x_off + i)), y + y_off + i);
        return;
    }
    for (; i < n; i++)
        y[y_off + i] = clg_act(act, alpha, beta, x[x_off + i]);
}

__kernel void clg_act_bwd16(__global const float *x, ulong x_off, __global const float *y,
                            ulong y_off, __global const float *dy, ulong dy_off, __global float *dx,
                            ulong dx_off, ulong n, uint act, float alpha, float beta)
{
    size_t i = get_global_id(0) * 16;
    if (i + 16 <= n) {
        float16 g = clg_act_grad16(act, alpha, beta, vload16(0, x + x_off + i),
                                   vload16(0, y + y_off + i));
        CLG_STORE16(vload16(0, dy + dy_off + i) * g, dx + dx_off + i);
        return;
    }
    for (; i < n; i++)
        dx[dx_off + i] =
            dy[dy_off + i] * clg_act_grad(act, alpha, beta, x[x_off + i], y[y_off + i]);
}

/* GPUs: a value a work-item, neighbours reading neighbours (CPUs take the 16-wide form). */
__kernel void clg_act_fwd(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                          ulong n, uint act, float alpha, float beta)
{
    CLG_FOR_EACH(i, n)
        y[y_off + i] = clg_act(act, alpha, beta, x[x_off + i]);
}

__kernel void clg_act_bwd(__global const float *x, ulong x_off, __global const float *y,
                          ulong y_off, __global const float *dy, ulong dy_off, __global float *dx,
                          ulong dx_off, ulong n, uint act, float alpha, float beta)
{
    CLG_FOR_EACH(i, n)
        dx[dx_off + i] =
            dy[dy_off + i] * clg_act_grad(act, alpha, beta, x[x_off + i], y[y_off + i]);
}

/* y = a * b, b of a's size (hw 1) or one value per plane of hw values of a (a gate). */
__kernel void clg_mul(__global const float *a, ulong a_off, __global const float *b,
                      ulong b_off, __global float *y, ulong y_off, ulong n, uint hw)
{
    CLG_FOR_EACH(i, n)
        y[y_off + i] = a[a_off + i] * b[b_off + i / hw];
}

/* CPUs: y = a * b, 16 values a vector. Same shapes: a vector a work-item; a gate: `per`
 * planes a work-item, the plane's value broadcast (an element per work-item, with a 64-bit
 * division for the gate's index, ran EfficientNet's gates at 9 GB/s). Launch: (items). */
__kernel void clg_mul16(__global const float *a, ulong a_off, __global const float *b,
                        ulong b_off, __global float *y, ulong y_off, ulong n)
{
    size_t i = get_global_id(0) * 16;
    if (i + 16 <= n) {
        CLG_STORE16(vload16(0, a + a_off + i) * vload16(0, b + b_off + i), y + y_off + i);
        return;
    }
    for (; i < n; i++)
        y[y_off + i] = a[a_off + i] * b[b_off + i];
}

__kernel void clg_mul_planes(__global const float *a, ulong a_off, __global const float *b,
                             ulong b_off, __global float *y, ulong y_off, uint planes, uint per,
                             uint hw)
{
    uint first = get_global_id(0) * per;
    for (uint p = first; p < planes && p < first + per; p++) {
        const __global float *x = a + a_off + (size_t)p * hw;
        __global float *o = y + y_off + (size_t)p * hw;
        float g = b[b_off + p];
        uint i = 0;
        for (; i + 16 <= hw; i += 16)
            CLG_STORE16(vload16(0, x + i) * g, o + i);
        for (; i < hw; i++)
            o[i] = x[i] * g;
    }
}

/* A gate's gradient: db[p] = sum over plane p's hw values of dy * a, a work-item per plane,
 * 16 running sums then a fixed tree, so the order never varies. */
__kernel void clg_mul_plane_grad(__global const float *dy, ulong dy_off, __global const float *a,
                                 ulong a_off, __global float *db, ulong db_off, uint planes,
                                 uint hw)
{
    uint p = get_global_id(0);
    if (p >= planes)
        return;
    const __global float *g = dy + dy_off + (size_t)p * hw, *x = a + a_off + (size_t)p * hw;
    float16 acc = 0.0f;
    uint i = 0;
    for (; i + 16 <= hw; i += 16)
        acc = fma(vload16(0, g + i), vload16(0, x + i), acc);
    float sum = clg_hsum16(acc);
    for (; i < hw; i++)
        sum = fma(g[i], x[i], sum);
    db[db_off + p] = sum;
}

/* Input normalisation in place: x = (x - ms[c]) / ms[C + c] for channel c of C, planes of
 * hw values (a division, as the ONNX export's Div, so both give the same floats). */
__kernel void clg_input_norm(__global float *x, ulong x_off, __global const float *ms,
                             ulong ms_off, uint C, uint hw, ulong n)
{
    CLG_FOR_EACH(i, n) {
        uint c = (uint)((i / hw) % C);
        x[x_off + i] = (x[x_off + i] - ms[ms_off + c]) / ms[ms_off + C + c];
    }
}

/* y[n][k][pq] += bias[k]. */
__kernel void clg_bias_add(__global float *y, ulong y_off, __global const float *bias,
                                ulong b_off, uint K, uint PQ)
{
    uint pq = get_global_id(0), k = get_global_id(1), n = get_global_id(2);
    if (pq >= PQ || k >= K)
        return;
    y[y_off + ((size_t)n * K + k) * PQ + pq] += bias[b_off + k];
}

/* The same over whole planes, and max(y, 0) after it with relu, for CPUs: one work-item per
 * (image, channel) plane, 16 floats at a time (POCL ran the form above near 7 GB/s). */
__kernel void clg_bias_relu_planes(__global float *y, ulong y_off, __global const float *bias,
                                   ulong b_off, uint K, uint PQ, uint planes, uint relu)
{
    uint plane = get_global_id(0);
    if (plane >= planes)
        return;
    __global float *p = y + y_off + (size_t)plane * PQ;
    float b = bias[b_off + plane % K];
    uint i = 0;
    for (; i + 16 <= PQ; i += 16) {
        float16 v = vload16(0, p + i) + b;
        CLG_STORE16(relu ? fmax(v, 0.0f) : v, p + i);
    }
    for (; i < PQ; i++) {
        float v = p[i] + b;
        p[i] = relu ? fmax(v, 0.0f) : v;
    }
}

/* y[n][k] += bias[k] for outputs without pixels (fully connected): dimension 0 runs along k. */
__kernel void clg_bias_add_rows(__global float *y, ulong y_off, __global const float *bias,
                                ulong b_off, uint K, uint N)
{
    uint k = get_global_id(0), n = get_global_id(1);
    if (k >= K || n >= N)
        return;
    y[y_off + (size_t)n * K + k] += bias[b_off + k];
}

/* db[k] = sum over n and pq of dy[n][k][pq], summed in a fixed order by one work-item: each
 * sample's row in 16 running sums (one chain of additions would wait on each one's latency),
 * then those in a fixed tree, then the samples in order. */
__kernel void clg_bias_grad(__global const float *dy, ulong dy_off, uint N, uint K, uint PQ,
                                 __global float *db, ulong db_off)
{
    uint k = get_global_id(0);
    if (k >= K)
        return;
    float sum = 0.0f;
    for (uint n = 0; n < N; n++)
        sum += clg_sum_run(dy + dy_off + ((size_t)n * K + k) * PQ, PQ);
    db[db_off + k] = sum;
}

/* GPUs: a work-group of BIAS_LOCAL items per channel, neighbours reading neighbouring pixels
 * of each image's plane, the partial sums added as a tree in a fixed order. Launch:
 * (K * BIAS_LOCAL), local BIAS_LOCAL. */
#define BIAS_LOCAL 256
__kernel __attribute__((reqd_work_group_size(BIAS_LOCAL, 1, 1)))
void clg_bias_grad_group(__global const float *dy, ulong dy_off, uint N, uint K, uint PQ,
                         __global float *db, ulong db_off)
{
    __local float acc[BIAS_LOCAL];
    uint k = get_group_id(0), j = get_local_id(0);
    float sum = clg_group_sum(acc, j, BIAS_LOCAL, clg_channel_share(dy + dy_off, N, K, PQ, k, j, BIAS_LOCAL));
    if (j == 0)
        db[db_off + k] = sum;
}
