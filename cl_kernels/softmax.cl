/* Softmax cross-entropy, one work-item per sample (rows of C logits). The maximum is
 * subtracted before exp, so large logits stay finite. */

/* labels: N labels, then N flags set to 1 where the first largest logit is the label. */
__kernel void clg_xent_fwd(__global const float *z, ulong z_off, __global int *labels, uint N,
                           uint C, __global float *loss, ulong loss_off)
{
    uint i = get_global_id(0);
    if (i >= N)
        return;
    const __global float *row = z + z_off + (size_t)i * C;
    float m = row[0];
    uint arg = 0;
    for (uint c = 1; c < C; c++)
        if (row[c] > m) {
            m = row[c];
            arg = c;
        }
    float s = 0.0f;
    for (uint c = 0; c < C; c++)
        s += exp(row[c] - m);
    int label = labels[i];
    loss[loss_off + i] = log(s) + m - row[label];
    labels[N + i] = (int)arg == label;
}

__kernel void clg_xent_bwd(__global const float *z, ulong z_off, __global const int *labels,
                           uint N, uint C, float scale, __global float *dz, ulong dz_off)
{
    uint i = get_global_id(0);
    if (i >= N)
        return;
    const __global float *row = z + z_off + (size_t)i * C;
    __global float *out = dz + dz_off + (size_t)i * C;
    float m = row[0];
    for (uint c = 1; c < C; c++)
        m = fmax(m, row[c]);
    float s = 0.0f;
    for (uint c = 0; c < C; c++)
        s += exp(row[c] - m);
    int label = labels[i];
    /* Read every logit before writing: dz may be z. */
    for (uint c = 0; c < C; c++) {
        float p = exp(row[c] - m) / s;
        out[c] = scale * (p - ((int)c == label ? 1.0f : 0.0f));
    }
}
