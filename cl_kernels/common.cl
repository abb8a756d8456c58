/* Helpers shared by every clgrad kernel family; passed as the first source string of each
 * program. Layout conventions: tensors are float32, NCHW, row-major; every buffer argument
 * comes with an element offset so that views (batch ranges) need no sub-buffers. */

/* Index of the current work-item in a 1-D launch, as a size_t for large tensors. */
#define CLG_GID0 ((size_t)get_global_id(0))

/* i over [0, n) in strides of dimension 0 of the launch. Elementwise kernels:
 * clg__launch_elementwise launches one work-item an element, so each runs once; a smaller
 * launch would still cover n (pooling's CPU kernels launch one item a plane, along its rows). */
#define CLG_FOR_EACH(i, n) for (size_t i = CLG_GID0; i < (n); i += get_global_size(0))

/* The sum of every work-item's v over a work-group of n items (a power of 2) through acc (n
 * floats of local memory), as a tree in a fixed order, so that results are reproducible;
 * every item gets it, and acc may be used again after. */
float clg_group_sum(__local float *acc, uint j, uint n, float v)
{
    acc[j] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint span = n / 2; span > 0; span /= 2) {
        if (j < span)
            acc[j] += acc[j + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float total = acc[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Work-item j's share of channel c's sum over every image's plane of x (N x C x HW): the
 * pixels j, j + step, ... of each plane, so that neighbouring items read neighbouring pixels
 * (the GPU form of per-channel reductions; clg_group_sum adds the shares). */
float clg_channel_share(const __global float *x, uint N, uint C, uint HW, uint c, uint j,
                        uint step)
{
    float part = 0.0f;
    for (uint n = 0; n < N; n++) {
        const __global float *xc = x + ((size_t)n * C + c) * HW;
        for (uint i = j; i < HW; i += step)
            part += xc[i];
    }
    return part;
}

/* The sum of a vector's 16 lanes as a tree in a fixed order (halves added, then their halves):
 * the end of every CPU reduction that keeps 16 running sums. */
inline float clg_hsum16(float16 v)
{
    float8 a = v.lo + v.hi;
    float4 b = a.lo + a.hi;
    float2 c = b.lo + b.hi;
    return c.x + c.y;
}

/* The sum of n floats from p: 16 running sums, their tree, then the tail in order (CPU
 * reductions of a plane; the order never varies). */
inline float clg_sum_run(const __global float *p, uint n)
{
    float16 acc = 0.0f;
    uint i = 0;
    for (; i + 16 <= n; i += 16)
        acc += vload16(0, p + i);
    float sum = clg_hsum16(acc);
    for (; i < n; i++)
        sum += p[i];
    return sum;
}

/* e^t for t <= 0 (NaN stays NaN): 2^n e^r, n = rint(t / ln 2), r = t - n ln 2 with ln 2 in
 * two parts (|r| <= ln 2 / 2), e^r Cephes' degree-7 polynomial (about 1 ulp); below
 * ln(FLT_MIN) 0, where 2^n would not be a normal float. The built-in exp handles every
 * argument at several times the instructions, which a convolution's SiLU epilogue paid (as
 * much as a pass of its own). Then the sigmoid, so that exp never overflows: for x < 0, e^x /
 * (1 + e^x), one division either way. Then a convolution's forward epilogue after its bias:
 * act 1 a ReLU capped at hi (INFINITY: a plain ReLU), 2 SiLU x sigmoid(x) (inference only:
 * training's backward needs x), else x; the kernels that take epilogue bits read act as
 * bits >> 1 (bit 1 the bias). W: the vector width, empty for one float. */
#define CLG_SIGMOID_W(W)                                                                      \
    inline float##W clg_exp_neg##W(float##W t)                                                \
    {                                                                                         \
        float##W big = fma(t, 1.44269504f, 12582912.0f); /* 1.5 2^23: rounds to an integer */  \
        float##W n = big - 12582912.0f;                                                       \
        float##W r = fma(n, -0.693359375f, t);                                                \
        r = fma(n, 2.12194440e-4f, r);                                                        \
        float##W p = fma(r, 1.9875691500e-4f, 1.3981999507e-3f);                              \
        p = fma(p, r, 8.3334519073e-3f);                                                      \
        p = fma(p, r, 4.1665795894e-2f);                                                      \
        p = fma(p, r, 1.6666665459e-1f);                                                      \
        p = fma(p, r, 5.0000001201e-1f);                                                      \
        p = fma(p, r * r, r + 1.0f);                                                          \
        float##W e = p * as_float##W((as_int##W(big) - 0x4B400000 + 127) << 23);              \
        return select(e, (float##W)(0.0f), isless(t, -87.33f));                               \
    }                                                                                         \
    inline float##W clg_sigmoid##W(float##W x)                                                \
    {                                                                                         \
        float##W e = clg_exp_neg##W(-fabs(x));                                                \
        float##W r = 1.0f / (1.0f + e);                                                       \
        return select(e * r, r, isgreaterequal(x, 0.0f));                                     \
    }                                                                                         \
    inline float##W clg_epi##W(uint act, float hi, float##W x)                                \
    {                                                                                         \
        return act == 1u ? fmin(fmax(x, 0.0f), hi) : act == 2u ? x * clg_sigmoid##W(x) : x;  \
    }
CLG_SIGMOID_W()
CLG_SIGMOID_W(8)
CLG_SIGMOID_W(16)
#undef CLG_SIGMOID_W

/* Software prefetch where the compiler targets x86 (POCL's CPU device): elsewhere (GPUs,
 * oclgrind's SPIR) nothing. rw: 0 read, 1 write. */
#if defined(__x86_64__) && defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
#define CLG_PREFETCH(p, rw) __builtin_prefetch((p), (rw), 3)
#endif
#endif
#ifndef CLG_PREFETCH
#define CLG_PREFETCH(p, rw) ((void)0)
#endif

/* A 16-float store to global memory as one instruction: POCL 3.1's vstore16 becomes four
 * 4-float stores and three extracts on x86; a store through a vector type aligned like a
 * float (what vstore16 may assume) lets LLVM use one unaligned vector store. */
typedef float16 clg_float16_u __attribute__((aligned(4)));
#define CLG_STORE16(v, p) (*(__global clg_float16_u *)(p) = (v))

/* Register blocks of MR rows x NV float16 vectors (MR and NV from the family), the inner step
 * of the CPU-style products: zero them, load a row of B, and acc[i] += A(i) * B for every
 * row, A(i) an expression giving row i's scalar. Fully unrolled, so acc stays in registers. */
#define CLG_BLOCK_ZERO(acc)                                                                   \
    _Pragma("unroll") for (int zi_ = 0; zi_ < MR; zi_++)                                      \
        _Pragma("unroll") for (int zv_ = 0; zv_ < NV; zv_++) acc[zi_][zv_] = (float16)(0.0f)
#define CLG_BLOCK_LOAD(bv, ptr)                                                               \
    _Pragma("unroll") for (int lv_ = 0; lv_ < NV; lv_++) bv[lv_] = vload16(lv_, (ptr))
#define CLG_BLOCK_FMA(acc, bv, A)                                                             \
    _Pragma("unroll") for (int fi_ = 0; fi_ < MR; fi_++) {                                    \
        float fa_ = (A(fi_));                                                                 \
        _Pragma("unroll") for (int fv_ = 0; fv_ < NV; fv_++)                                  \
            acc[fi_][fv_] = fma((float16)(fa_), bv[fv_], acc[fi_][fv_]);                      \
    }

/* Row xr's value at column u, 0 outside [0, W). */
inline float clg_row_at(const __global float *xr, int u, uint W)
{
    int in = u >= 0 && u < (int)W;
    float v = xr[in ? u : 0];
    return in ? v : 0.0f;
}

/* Row i of a plane xp (H x W) padded into local memory, PW wide: input row i - pt with its
 * column 0 at pl (either may be negative: leading rows or columns dropped), `fill` around it
 * (the depthwise and pooling kernels' planes: zeros, -INFINITY). */
inline void clg_pad_row_local(__local float *dst, const __global float *xp, int i, int pt,
                              int pl, uint H, uint W, uint PW, float fill)
{
    int h = i - pt, in = h >= 0 && h < (int)H;
    int j0 = in ? clamp(pl, 0, (int)PW) : (int)PW;
    int j1 = in ? clamp(pl + (int)W, j0, (int)PW) : (int)PW;
    for (int j = 0; j < j0; j++)
        dst[j] = fill;
    const __global float *src = xp + (size_t)(in ? h : 0) * W - pl;
    int j = j0;
    for (; j + 16 <= j1; j += 16)
        vstore16(vload16(0, src + j), 0, dst + j);
    for (; j < j1; j++)
        dst[j] = src[j];
    for (j = j1; j < (int)PW; j++)
        dst[j] = fill;
}

/* The first min(16, n) lanes of v stored at y: a row's or a plane's last vector, short. */
inline void clg_store16_first(float16 v, __global float *y, uint n)
{
    if (n >= 16) {
        CLG_STORE16(v, y);
        return;
    }
    float part[16];
    vstore16(v, 0, part);
    for (uint k = 0; k < n; k++)
        y[k] = part[k];
}

/* 16 inputs of row xr from column u, every sw-th (1 or 2; lanes outside [0, W) read as 0). */
inline float16 clg_row_load16(const __global float *xr, int u, uint W, uint sw)
{
    if (sw == 1 && u >= 0 && u + 16 <= (int)W)
        return vload16(0, xr + u);
    if (sw == 2 && u >= 0 && u + 32 <= (int)W)
        return (float16)(vload16(0, xr + u).even, vload16(1, xr + u).even);
    float v[16];
    for (int k = 0; k < 16; k++)
        v[k] = clg_row_at(xr, u + k * (int)sw, W);
    return vload16(0, v);
}
