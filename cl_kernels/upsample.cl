/* Up-sampling by whole factors (upsample.h): nearest (each input value repeated, ONNX's
 * Resize with asymmetric coordinates and floor, PyTorch's "nearest") and bilinear with half-pixel
 * centres (PyTorch's align_corners=False: source x = max((o + 0.5) / s - 0.5, 0), the right
 * neighbour clamped to the edge). A work-item per element; the backward pass gathers, for each
 * input value, the outputs within reach of it, in a fixed order. */

/* Output index o's two sources along an axis of n inputs with factor s, and the second's
 * weight (nearest: one source, weight 0). */
void clg_up_sources(int o, int n, int s, int bilinear, int *lo, int *hi, float *t)
{
    if (!bilinear) {
        *lo = *hi = o / s;
        *t = 0.0f;
        return;
    }
    float x = fmax(((float)o + 0.5f) / (float)s - 0.5f, 0.0f);
    int l = min((int)x, n - 1);
    *lo = l;
    *hi = min(l + 1, n - 1);
    *t = x - (float)l;
}

__kernel void clg_up_fwd(__global const float *x, ulong xo, __global float *y, ulong yo,
                         ulong count, int H, int W, int sh, int sw, int bilinear)
{
    int OH = H * sh, OW = W * sw;
    CLG_FOR_EACH(i, count) {
        int ox = (int)(i % (ulong)OW);
        ulong t = i / (ulong)OW;
        int oy = (int)(t % (ulong)OH);
        const __global float *p = x + xo + (t / (ulong)OH) * (ulong)H * (ulong)W;
        int y0, y1, x0, x1;
        float ty, tx;
        clg_up_sources(oy, H, sh, bilinear, &y0, &y1, &ty);
        clg_up_sources(ox, W, sw, bilinear, &x0, &x1, &tx);
        float top = fma(tx, p[y0 * W + x1] - p[y0 * W + x0], p[y0 * W + x0]);
        float bot = fma(tx, p[y1 * W + x1] - p[y1 * W + x0], p[y1 * W + x0]);
        y[yo + i] = fma(ty, bot - top, top);
    }
}

/* The weight with which output o reads input j along an axis. */
float clg_up_weight(int o, int j, int n, int s, int bilinear)
{
    int lo, hi;
    float t;
    clg_up_sources(o, n, s, bilinear, &lo, &hi, &t);
    return (lo == j ? 1.0f - t : 0.0f) + (hi == j ? t : 0.0f);
}

__kernel void clg_up_bwd(__global const float *dy, ulong dyo, __global float *dx, ulong dxo,
                         ulong count, int H, int W, int sh, int sw, int bilinear)
{
    int OH = H * sh, OW = W * sw;
    CLG_FOR_EACH(i, count) {
        int jx = (int)(i % (ulong)W);
        ulong t = i / (ulong)W;
        int jy = (int)(t % (ulong)H);
        const __global float *g = dy + dyo + (t / (ulong)H) * (ulong)OH * (ulong)OW;
        /* outputs within reach: nearest, its own block; bilinear, a block and a half on
         * each side (and at the last input, every output past it) */
        int reach = bilinear ? 2 : 0;
        int ylo = max((jy - reach) * sh, 0), yhi = jy == H - 1 ? OH : min((jy + 1 + reach) * sh, OH);
        int xlo = max((jx - reach) * sw, 0), xhi = jx == W - 1 ? OW : min((jx + 1 + reach) * sw, OW);
        float sum = 0.0f;
        for (int oy = ylo; oy < yhi; oy++) {
            float wy = clg_up_weight(oy, jy, H, sh, bilinear);
            if (wy == 0.0f)
                continue;
            float row = 0.0f;
            for (int ox = xlo; ox < xhi; ox++)
                row = fma(clg_up_weight(ox, jx, W, sw, bilinear), g[(ulong)oy * OW + ox], row);
            sum = fma(wy, row, sum);
        }
        dx[dxo + i] = sum;
    }
}
