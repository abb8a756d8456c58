/* Whole-tensor kernels. 1-D launches striding over the elements (CLG_FOR_EACH): these are
 * bound by memory bandwidth, and POCL vectorises across the work-items of a work-group. */

__kernel void clg_tensor_fill(__global float *x, ulong offset, ulong n, float value)
{
    CLG_FOR_EACH(i, n)
        x[offset + i] = value;
}

__kernel void clg_tensor_scale(__global float *x, ulong offset, ulong n, float alpha)
{
    CLG_FOR_EACH(i, n)
        x[offset + i] *= alpha;
}

/* Partial sums of squares: work-group g sums elements g*SUMSQ_LOCAL+lid, + groups*SUMSQ_LOCAL, ... in a local
 * tree; the host adds the groups' partials in order (a fixed order: reproducible). */
#ifndef SUMSQ_LOCAL
#define SUMSQ_LOCAL 64 /* the host passes its own (src/tensor/tensor_internal.h) */
#endif
__kernel __attribute__((reqd_work_group_size(SUMSQ_LOCAL, 1, 1)))
void clg_tensor_sumsq(__global const float *x, ulong offset, ulong n, __global float *partial)
{
    __local float acc[SUMSQ_LOCAL];
    size_t lid = get_local_id(0), stride = get_global_size(0);
    float s = 0.0f;
    for (size_t i = CLG_GID0; i < n; i += stride) {
        float v = x[offset + i];
        s += v * v;
    }
    float total = clg_group_sum(acc, (uint)lid, SUMSQ_LOCAL, s);
    if (lid == 0)
        partial[get_group_id(0)] = total;
}

/* Partial counts of elements that are NaN or infinite, as the sum of squares above. */
__kernel __attribute__((reqd_work_group_size(SUMSQ_LOCAL, 1, 1)))
void clg_tensor_nonfinite(__global const float *x, ulong offset, ulong n, __global uint *partial)
{
    __local uint acc[SUMSQ_LOCAL];
    size_t lid = get_local_id(0), stride = get_global_size(0);
    uint c = 0;
    for (size_t i = CLG_GID0; i < n; i += stride)
        c += !isfinite(x[offset + i]);
    acc[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t span = SUMSQ_LOCAL / 2; span > 0; span /= 2) {
        if (lid < span)
            acc[lid] += acc[lid + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = acc[0];
}

/* y = a + b (then max(y, 0) when relu), elementwise; y may be a. */
__kernel void clg_tensor_add(__global const float *a, ulong ao, __global const float *b,
                             ulong bo, __global float *y, ulong yo, ulong n, uint relu)
{
    CLG_FOR_EACH(i, n) {
        float v = a[ao + i] + b[bo + i];
        y[yo + i] = relu ? fmax(v, 0.0f) : v;
    }
}

/* y = a + b where mask > 0, else 0: a gradient sum through a ReLU whose output is mask. */
__kernel void clg_tensor_add_masked(__global const float *a, ulong ao, __global const float *b,
                                    ulong bo, __global const float *m, ulong mo,
                                    __global float *y, ulong yo, ulong n)
{
    CLG_FOR_EACH(i, n) {
        float v = a[ao + i] + b[bo + i];
        y[yo + i] = m[mo + i] > 0.0f ? v : 0.0f;
    }
}

/* Channels of a batch stacked into a wider one: item i of the narrow tensor (per sample
 * `narrow` = its channels x pixels) is at channel offset `at` (in floats, at * pixels) of the
 * wide one's sample (`wide` floats). to_wide 1 copies narrow to wide, 0 wide to narrow. */
__kernel void clg_tensor_stack(__global float *narrow, ulong no, __global float *wide, ulong wo,
                               ulong n, ulong per_narrow, ulong per_wide, ulong at, uint to_wide)
{
    CLG_FOR_EACH(i, n) {
        size_t s = i / per_narrow, r = i % per_narrow;
        size_t w = wo + s * per_wide + at + r;
        if (to_wide)
            wide[w] = narrow[no + i];
        else
            narrow[no + i] = wide[w];
    }
}

/* len floats from s to d, 16 at a time. */
inline void clg_copy_run(const __global float *s, __global float *d, uint len)
{
    uint k = 0;
    for (; k + 16 <= len; k += 16)
        vstore16(vload16(0, s + k), 0, d + k);
    for (; k < len; k++)
        d[k] = s[k];
}

/* CPU form of clg_tensor_stack: each image's narrow block is one run in the wide tensor; a
 * work-item per piece of a run (the elementwise form spent two 64-bit divisions an element). */
__kernel void clg_tensor_stack_runs(__global float *narrow, ulong no, __global float *wide,
                                    ulong wo, uint images, uint pieces, ulong per_narrow,
                                    ulong per_wide, ulong at, uint to_wide)
{
    uint id = get_global_id(0);
    if (id >= images * pieces)
        return;
    uint img = id / pieces, piece = id % pieces;
    ulong chunk = (per_narrow + pieces - 1) / pieces, start = piece * chunk;
    if (start >= per_narrow)
        return;
    uint len = (uint)min(chunk, per_narrow - start);
    __global float *n = narrow + no + img * per_narrow + start;
    __global float *w = wide + wo + img * per_wide + at + start;
    if (to_wide)
        clg_copy_run(n, w, len);
    else
        clg_copy_run(w, n, len);
}

/* CPU form of clg_tensor_shuffle: whole planes copied, `per` planes a work-item. */
__kernel void clg_tensor_shuffle_planes(__global const float *x, ulong xo, __global float *y,
                                        ulong yo, uint planes, uint per, uint C, uint g, uint hw)
{
    uint first = get_global_id(0) * per;
    for (uint p = first; p < planes && p < first + per; p++) {
        uint c = p % C, img = p / C;
        clg_copy_run(x + xo + ((size_t)img * C + (c % g) * (C / g) + c / g) * hw,
                     y + yo + (size_t)p * hw, hw);
    }
}

/* Channel shuffle (ShuffleNet): y's channel c of C is x's channel (c % g) * (C / g) + c / g,
 * planes of hw values. Its inverse is the same with C / g groups (the backward pass). */
__kernel void clg_tensor_shuffle(__global const float *x, ulong xo, __global float *y, ulong yo,
                                 ulong n, uint C, uint g, uint hw)
{
    CLG_FOR_EACH(i, n) {
        size_t plane = i / hw, k = i % hw, c = plane % C, img = plane / C;
        size_t from = (img * C + (c % g) * (C / g) + c / g) * hw + k;
        y[yo + i] = x[xo + from];
    }
}
