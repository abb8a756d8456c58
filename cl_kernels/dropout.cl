/* Dropout with a counter-based generator: Philox4x32-10 (Salmon et al., SC'11) with key
 * (seed low, seed high) and counter (i / 4, 0, step low, step high); element i uses word i % 4
 * of the block, as a uniform in [0, 1) from its top 24 bits. One work-item per block of 4. */

/* One Philox block in four scalars (explicit vector types would keep POCL from running
 * work-items as vectors: LLVM's loop vectorizer takes scalar code only). The 32x32->64-bit
 * products are written as ulong multiplies: one vpmuludq per lane on x86, where mul_hi would
 * be emulated. */
#define PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                                                    \
    do {                                                                                       \
        ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;                      \
        uint n0 = (uint)(p1 >> 32) ^ c1 ^ k0, n2 = (uint)(p0 >> 32) ^ c3 ^ k1;                 \
        c1 = (uint)p1;                                                                         \
        c3 = (uint)p0;                                                                         \
        c0 = n0;                                                                               \
        c2 = n2;                                                                               \
        k0 += 0x9E3779B9u;                                                                     \
        k1 += 0xBB67AE85u;                                                                     \
    } while (0)

/* Element k's multiplier: 0 (dropped) or 1 / (1 - p), from word k of the block. */
float clg_keep(uint word, float p, float scale)
{
    return (float)(word >> 8) * 0x1.0p-24f >= p ? scale : 0.0f;
}

/* One work-item per Philox block. The tensor's element i is element base + i of the whole
 * batch (base > 0 for a device's shard of a mini-batch), so every shard draws the mask the
 * whole batch would: block b covers whole-batch elements 4b .. 4b+3, in word order. Whole
 * blocks inside the tensor take no branch; the blocks at its two ends check each element. */
__kernel void clg_dropout(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                          ulong n, float p, ulong seed, ulong step, ulong base)
{
    size_t b = CLG_GID0 + base / 4, first = 4 * b;
    if (first >= base + n)
        return;
    uint c0 = (uint)b, c1 = (uint)(b >> 32), c2 = (uint)step, c3 = (uint)(step >> 32);
    uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
    for (int round = 0; round < 10; round++)
        PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
    float scale = 1.0f / (1.0f - p);
    float m0 = clg_keep(c0, p, scale), m1 = clg_keep(c1, p, scale);
    float m2 = clg_keep(c2, p, scale), m3 = clg_keep(c3, p, scale);
    const __global float *in = x + x_off;
    __global float *out = y + y_off;
    if (first >= base && first + 4 <= base + n) {
        size_t at = first - base;
        out[at] = in[at] * m0;
        out[at + 1] = in[at + 1] * m1;
        out[at + 2] = in[at + 2] * m2;
        out[at + 3] = in[at + 3] * m3;
        return;
    }
    for (int k = 0; k < 4; k++) {
        size_t g = first + (size_t)k;
        float m = k == 0 ? m0 : k == 1 ? m1 : k == 2 ? m2 : m3;
        if (g >= base && g < base + n)
            out[g - base] = in[g - base] * m;
    }
}
