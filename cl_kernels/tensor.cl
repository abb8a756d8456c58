/* Whole-tensor kernels. 1-D launches, one element per work-item: these are bound by memory
 * bandwidth, and POCL vectorises across the work-items of a work-group. */

__kernel void clg_tensor_fill(__global float *x, ulong offset, ulong n, float value)
{
    size_t i = CLG_GID0;
    if (i < n)
        x[offset + i] = value;
}
