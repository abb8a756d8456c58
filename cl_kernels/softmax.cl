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

/* GPUs: one work-group of XENT_LOCAL work-items per sample, each taking every XENT_LOCAL-th
 * logit (neighbouring items read neighbouring logits), reduced in local memory as a tree in a
 * fixed order. Launch: (N * XENT_LOCAL), local XENT_LOCAL. */
#define XENT_LOCAL 64

/* The row's first largest logit (*m, *arg) and the sum of exp(z - m), for every item. */
void clg_xent_row_stats(const __global float *row, uint C, uint j, __local float *vals,
                        __local uint *idx, float *m_out, uint *arg_out, float *s_out)
{
    float m = -INFINITY;
    uint arg = C; /* none yet: an item past the row keeps it and loses every comparison */
    for (uint c = j; c < C; c += XENT_LOCAL)
        if (arg == C || row[c] > m) {
            m = row[c];
            arg = c;
        }
    vals[j] = m;
    idx[j] = arg;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint span = XENT_LOCAL / 2; span > 0; span /= 2) {
        if (j < span) {
            float o = vals[j + span];
            uint oi = idx[j + span];
            if (oi < C && (idx[j] == C || o > vals[j] || (o == vals[j] && oi < idx[j]))) {
                vals[j] = o;
                idx[j] = oi;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = vals[0];
    arg = idx[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (uint c = j; c < C; c += XENT_LOCAL)
        s += exp(row[c] - m);
    *s_out = clg_group_sum(vals, j, XENT_LOCAL, s);
    *m_out = m;
    *arg_out = arg;
}

__kernel __attribute__((reqd_work_group_size(XENT_LOCAL, 1, 1)))
void clg_xent_fwd_group(__global const float *z, ulong z_off, __global int *labels, uint N,
                        uint C, __global float *loss, ulong loss_off)
{
    __local float vals[XENT_LOCAL];
    __local uint idx[XENT_LOCAL];
    uint i = get_group_id(0), j = get_local_id(0);
    const __global float *row = z + z_off + (size_t)i * C;
    float m, s;
    uint arg;
    clg_xent_row_stats(row, C, j, vals, idx, &m, &arg, &s);
    if (j == 0) {
        int label = labels[i];
        loss[loss_off + i] = log(s) + m - row[label];
        labels[N + i] = (int)arg == label;
    }
}

__kernel __attribute__((reqd_work_group_size(XENT_LOCAL, 1, 1)))
void clg_xent_bwd_group(__global const float *z, ulong z_off, __global const int *labels,
                        uint N, uint C, float scale, __global float *dz, ulong dz_off)
{
    __local float vals[XENT_LOCAL];
    __local uint idx[XENT_LOCAL];
    uint i = get_group_id(0), j = get_local_id(0);
    const __global float *row = z + z_off + (size_t)i * C;
    __global float *out = dz + dz_off + (size_t)i * C;
    float m, s;
    uint arg;
    clg_xent_row_stats(row, C, j, vals, idx, &m, &arg, &s);
    int label = labels[i];
    /* dz may be z: every logit an item writes is one only it reads from here on */
    for (uint c = j; c < C; c += XENT_LOCAL)
        out[c] = scale * (exp(row[c] - m) / s - ((int)c == label ? 1.0f : 0.0f));
    (void)N;
}
