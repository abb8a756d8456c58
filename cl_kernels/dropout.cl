/* Dropout with a counter-based generator: Philox4x32-10 (Salmon et al., SC'11) with key
 * (seed low, seed high) and counter (i / 4, 0, step low, step high); element i uses word i % 4
 * of the block, as a uniform in [0, 1) from its top 24 bits. One work-item per element. */

uint4 clg_philox4x32_10(uint4 ctr, uint2 key)
{
    for (int round = 0; round < 10; round++) {
        uint lo0 = 0xD2511F53u * ctr.x, hi0 = mul_hi(0xD2511F53u, ctr.x);
        uint lo1 = 0xCD9E8D57u * ctr.z, hi1 = mul_hi(0xCD9E8D57u, ctr.z);
        ctr = (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
    }
    return ctr;
}

float clg_dropout_uniform(ulong i, ulong seed, ulong step)
{
    uint4 r = clg_philox4x32_10((uint4)((uint)(i >> 2), (uint)(i >> 34), (uint)step, (uint)(step >> 32)),
                                (uint2)((uint)seed, (uint)(seed >> 32)));
    uint w = (i & 3) == 0 ? r.x : (i & 3) == 1 ? r.y : (i & 3) == 2 ? r.z : r.w;
    return (float)(w >> 8) * 0x1.0p-24f;
}

__kernel void clg_dropout(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                          ulong n, float p, ulong seed, ulong step)
{
    size_t i = CLG_GID0;
    if (i >= n)
        return;
    float keep = clg_dropout_uniform(i, seed, step) >= p ? 1.0f / (1.0f - p) : 0.0f;
    y[y_off + i] = x[x_off + i] * keep;
}
