/* Whole-tensor kernels. 1-D launches, one element per work-item: these are bound by memory
 * bandwidth, and POCL vectorises across the work-items of a work-group. */

__kernel void clg_tensor_fill(__global float *x, ulong offset, ulong n, float value)
{
    size_t i = CLG_GID0;
    if (i < n)
        x[offset + i] = value;
}

__kernel void clg_tensor_scale(__global float *x, ulong offset, ulong n, float alpha)
{
    size_t i = CLG_GID0;
    if (i < n)
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
    acc[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t span = SUMSQ_LOCAL / 2; span > 0; span /= 2) {
        if (lid < span)
            acc[lid] += acc[lid + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = acc[0];
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
