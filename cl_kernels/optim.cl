/* Optimizer updates, one element per work-item, in the same operation order as the host
 * versions in src/ops/optim.c (so that both agree to rounding). */

__kernel void clg_sgd(__global float *w, ulong w_off, __global const float *g, ulong g_off,
                      __global float *v, ulong v_off, ulong n, float lr, float momentum, float wd,
                      uint nesterov)
{
    size_t i = CLG_GID0;
    if (i >= n)
        return;
    float wi = w[w_off + i], d = g[g_off + i] + wd * wi;
    float vi = momentum * v[v_off + i] + d;
    v[v_off + i] = vi;
    w[w_off + i] = wi - lr * (nesterov ? d + momentum * vi : vi);
}

__kernel void clg_adam(__global float *w, ulong w_off, __global const float *g, ulong g_off,
                       __global float *m, ulong m_off, __global float *v, ulong v_off, ulong n,
                       float lr, float b1, float b2, float eps, float wd, uint decoupled,
                       float c1, float c2)
{
    size_t i = CLG_GID0;
    if (i >= n)
        return;
    float wi = w[w_off + i], gi = g[g_off + i];
    if (decoupled)
        wi -= lr * wd * wi;
    else
        gi += wd * wi;
    float mi = b1 * m[m_off + i] + (1.0f - b1) * gi;
    float vi = b2 * v[v_off + i] + (1.0f - b2) * gi * gi;
    m[m_off + i] = mi;
    v[v_off + i] = vi;
    w[w_off + i] = wi - lr * (mi / c1) / (sqrt(vi / c2) + eps);
}

/* The same, 16 elements per work-item as one float16 (for CPUs: POCL runs the one-element
 * form a float at a time, 20 GB/s on the default network's 3.3M parameters). Launch:
 * ceil(n / 16); the last item does what is left one by one. */
__kernel void clg_adam16(__global float *w, ulong w_off, __global const float *g, ulong g_off,
                         __global float *m, ulong m_off, __global float *v, ulong v_off, ulong n,
                         float lr, float b1, float b2, float eps, float wd, uint decoupled,
                         float c1, float c2)
{
    size_t i = CLG_GID0 * 16;
    if (i >= n)
        return;
    w += w_off + i, g += g_off + i, m += m_off + i, v += v_off + i;
    if (i + 16 <= n) {
        float16 wi = vload16(0, w), gi = vload16(0, g);
        if (decoupled)
            wi -= lr * wd * wi;
        else
            gi += wd * wi;
        float16 mi = b1 * vload16(0, m) + (1.0f - b1) * gi;
        float16 vi = b2 * vload16(0, v) + (1.0f - b2) * gi * gi;
        CLG_STORE16(mi, m);
        CLG_STORE16(vi, v);
        CLG_STORE16(wi - lr * (mi / c1) / (sqrt(vi / c2) + eps), w);
        return;
    }
    for (size_t k = 0; k < n - i; k++) {
        float wi = w[k], gi = g[k];
        if (decoupled)
            wi -= lr * wd * wi;
        else
            gi += wd * wi;
        float mi = b1 * m[k] + (1.0f - b1) * gi;
        float vi = b2 * v[k] + (1.0f - b2) * gi * gi;
        m[k] = mi;
        v[k] = vi;
        w[k] = wi - lr * (mi / c1) / (sqrt(vi / c2) + eps);
    }
}

__kernel void clg_rmsprop(__global float *w, ulong w_off, __global const float *g, ulong g_off,
                          __global float *v, ulong v_off, ulong n, float lr, float alpha, float eps,
                          float wd)
{
    size_t i = CLG_GID0;
    if (i >= n)
        return;
    float wi = w[w_off + i], gi = g[g_off + i] + wd * wi;
    float vi = alpha * v[v_off + i] + (1.0f - alpha) * gi * gi;
    v[v_off + i] = vi;
    w[w_off + i] = wi - lr * gi / (sqrt(vi) + eps);
}
