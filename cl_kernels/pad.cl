/* Spatial padding (pad.h): constant (a value; negative pads crop), reflect (mirrored about the
 * edge pixel, which is not repeated) and edge (the edge pixel repeated). A work-item per
 * element, forward and backward: a memory-bound copy whose gathers are a few integer
 * operations, on CPUs and GPUs alike. */

/* The input index that output index o of an axis reads (size n, lo pads before), or -1 for
 * the constant. Reflect's pads are below n, so one fold reaches the input. */
int clg_pad_source(int o, int n, int lo, int mode)
{
    int s = o - lo;
    if (mode == 1)
        return s < 0 ? -s : s >= n ? 2 * (n - 1) - s : s;
    if (mode == 2)
        return s < 0 ? 0 : s >= n ? n - 1 : s;
    return s >= 0 && s < n ? s : -1;
}

__kernel void clg_pad_fwd(__global const float *x, ulong x_off, __global float *y, ulong y_off,
                          ulong count, int H, int W, int OH, int OW, int top, int left, int mode,
                          float value)
{
    CLG_FOR_EACH(i, count) {
        int ox = (int)(i % (ulong)OW);
        ulong t = i / (ulong)OW;
        int oy = (int)(t % (ulong)OH);
        ulong plane = t / (ulong)OH;
        int sy = clg_pad_source(oy, H, top, mode), sx = clg_pad_source(ox, W, left, mode);
        y[y_off + i] = sy < 0 || sx < 0 ? value
                                        : x[x_off + (plane * (ulong)H + (ulong)sy) * (ulong)W + (ulong)sx];
    }
}

/* The output indices of an axis that read input index s: up to three ranges [lo[k], hi[k]]
 * (itself, and a mirror or the edge's run on each side); returns how many. */
int clg_pad_readers(int s, int n, int on, int lo_pad, int mode, int *lo, int *hi)
{
    int k = 0, hi_pad = on - n - lo_pad;
    if (mode == 2 && (s == 0 || s == n - 1)) { /* the edge's run, once when n is 1 */
        lo[k] = s == 0 ? 0 : s + lo_pad;
        hi[k++] = s == n - 1 ? on - 1 : lo_pad;
        return k;
    }
    if (s + lo_pad >= 0 && s + lo_pad < on)
        lo[k] = hi[k] = s + lo_pad, k++;
    if (mode == 1 && s >= 1 && s <= lo_pad)
        lo[k] = hi[k] = lo_pad - s, k++;
    if (mode == 1 && s <= n - 2 && s >= n - 1 - hi_pad)
        lo[k] = hi[k] = lo_pad + 2 * (n - 1) - s, k++;
    return k;
}

/* dx[s] = the sum of dy over every output that reads s, in a fixed order. */
__kernel void clg_pad_bwd(__global const float *dy, ulong dy_off, __global float *dx,
                          ulong dx_off, ulong count, int H, int W, int OH, int OW, int top,
                          int left, int mode)
{
    CLG_FOR_EACH(i, count) {
        int sx = (int)(i % (ulong)W);
        ulong t = i / (ulong)W;
        int sy = (int)(t % (ulong)H);
        ulong plane = t / (ulong)H;
        int ylo[3], yhi[3], xlo[3], xhi[3];
        int ny = clg_pad_readers(sy, H, OH, top, mode, ylo, yhi);
        int nx = clg_pad_readers(sx, W, OW, left, mode, xlo, xhi);
        const __global float *g = dy + dy_off + plane * (ulong)OH * (ulong)OW;
        float sum = 0.0f;
        for (int a = 0; a < ny; a++)
            for (int oy = ylo[a]; oy <= yhi[a]; oy++)
                for (int b = 0; b < nx; b++)
                    for (int ox = xlo[b]; ox <= xhi[b]; ox++)
                        sum += g[(ulong)oy * (ulong)OW + (ulong)ox];
        dx[dx_off + i] = sum;
    }
}
