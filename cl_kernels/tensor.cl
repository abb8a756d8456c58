/* Whole-tensor kernels: fill. 1-D launch; each work-item writes CLG_PER_ITEM consecutive
 * elements (so the launch stays small on CPUs and the loop vectorises).
 * Tunables: CLG_PER_ITEM elements per work-item. */
#ifndef CLG_PER_ITEM
#define CLG_PER_ITEM 16
#endif

__kernel void clg_tensor_fill(__global float *x, ulong offset, ulong n, float value)
{
    size_t first = CLG_GID0 * CLG_PER_ITEM;
    __global float *p = x + offset;
    for (size_t i = first; i < first + CLG_PER_ITEM && i < n; i++)
        p[i] = value;
}
