/* Dropout with a counter-based generator: Philox4x32-10 (Salmon et al., SC'11) with key
 * (seed low, seed high) and counter (i / 4, 0, step low, step high); element i uses word i % 4
 * of the block, as a uniform in [0, 1) from its top 24 bits. One work-item per block of 4. */

/* The 32x32->64-bit products are written as ulong multiplies: one vpmuludq per lane on x86,
 * where mul_hi would be emulated. */
uint4 clg_philox4x32_10(uint4 ctr, uint2 key)
{
    for (int round = 0; round < 10; round++) {
        ulong p0 = (ulong)0xD2511F53u * ctr.x, p1 = (ulong)0xCD9E8D57u * ctr.z;
        ctr = (uint4)((uint)(p1 >> 32) ^ ctr.y ^ key.x, (uint)p1, (uint)(p0 >> 32) ^ ctr.w ^ key.y,
                      (uint)p0);
        key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
    }
    return ctr;
}

/* One work-item per Philox block. The tensor's element i is element base + i of the whole
 * batch (base > 0 for a device's shard of a mini-batch), so every shard draws the mask the
 * whole batch would: block b covers whole-batch elements 4b .. 4b+3, in word order. */
__kernel void clg_dropout(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                          ulong n, float p, ulong seed, ulong step, ulong base)
{
    size_t b = CLG_GID0 + base / 4, first = 4 * b;
    if (first >= base + n)
        return;
    uint4 r = clg_philox4x32_10((uint4)((uint)b, (uint)(b >> 32), (uint)step, (uint)(step >> 32)),
                                (uint2)((uint)seed, (uint)(seed >> 32)));
    float scale = 1.0f / (1.0f - p);
    uint w[4] = {r.x, r.y, r.z, r.w};
    for (int k = 0; k < 4; k++) {
        size_t g = first + (size_t)k;
        if (g < base || g >= base + n)
            continue;
        float u = (float)(w[k] >> 8) * 0x1.0p-24f;
        y[y_off + g - base] = x[x_off + g - base] * (u >= p ? scale : 0.0f);
    }
}
