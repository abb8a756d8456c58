/* SGEMM kernels, row-major: C = alpha * op(A) * op(B) + beta * C, with op(A) m x k and op(B)
 * k x n. Every matrix argument comes with an element offset, a leading dimension and a batch
 * stride (dimension 2 of the launch is the batch index).
 *
 * clg_gemm_small   one work-item per element of C, any transposes. For small problems and
 *                  for the columns that the tiled kernels leave over.
 * clg_gemm_reg     register-blocked, for CPUs: each work-item computes an MR x NR block of C
 *                  with float16 accumulators and no local memory. A is read in place (either
 *                  layout) or, with ta = 2, from MR-row panels packed by clg_gemm_pack_a;
 *                  B is read as rows of NR floats, either in place (op(B) = B, with
 *                  the last column tile shifted left to stay inside the matrix) or, with
 *                  B_PANEL=1, from panels packed by clg_gemm_pack_b (one KC x NR panel per
 *                  column tile, contiguous, so that large leading dimensions cannot alias in
 *                  the caches). Launch: (n tiles, m tiles, batch), rounded up to the
 *                  work-group size. pf_c, pf_b: how far ahead (floats, 0: not) to
 *                  prefetch the lines of C of later tiles and of B in place (see
 *                  clg_gemm_reg).
 * clg_gemm_reduce  sums split-K partial products (few output tiles, long k).
 * GPUs use clg_gemm_tile (gemm_tile.cl).
 *
 * Tunables (set by -D from the per-device table or the tuner):
 *   MR       rows of C per work-item in clg_gemm_reg (1..16)
 *   NR       columns of C per work-item in clg_gemm_reg: 16 or 32
 *   B_PANEL  0: clg_gemm_reg reads B in place; 1: from packed panels; 2: the work-group
 *            copies each KC x NR block of its B columns into local memory and its work-items
 *            (one column tile, local_m row tiles) all read it from there
 *   KC       rows of B per local-memory block (B_PANEL 2)
 *   PF_PANEL k steps ahead to prefetch a packed B panel (B_PANEL 1; 0: not)
 */
#ifndef MR
#define MR 8
#endif
#ifndef NR
#define NR 32
#endif
#ifndef B_PANEL
#define B_PANEL 0
#endif
#ifndef KC
#define KC 256
#endif
#ifndef PF_PANEL
#define PF_PANEL 0
#endif

#define NV (NR / 16)

/* Element (r, c) of op(X), X stored row-major with leading dimension ld. */
#define OP_AT(X, trans, ld, r, c) ((trans) ? (X)[(size_t)(c) * (ld) + (r)] : (X)[(size_t)(r) * (ld) + (c)])

__kernel void clg_gemm_small(uint m, uint n, uint k, float alpha, float beta,
                             __global const float *A, ulong a_off, uint lda, uint ta, ulong sa,
                             __global const float *B, ulong b_off, uint ldb, uint tb, ulong sb,
                             __global float *C, ulong c_off, uint ldc, ulong sc)
{
    uint j = get_global_id(0), i = get_global_id(1);
    size_t batch = get_global_id(2);
    if (i >= m || j >= n)
        return;
    A += a_off + batch * sa;
    B += b_off + batch * sb;
    C += c_off + batch * sc + (size_t)i * ldc + j;
    float acc = 0.0f;
    for (uint p = 0; p < k; p++)
        acc = fma(OP_AT(A, ta, lda, i, p), OP_AT(B, tb, ldb, p, j), acc);
    /* beta == 0 must not read C: it may hold NaN. */
    *C = beta == 0.0f ? alpha * acc : fma(beta, *C, alpha * acc);
}

/* Packs rows [k0, k0+kc) of op(B) into panels: panel t holds columns [t*NR, t*NR+NR) as kc rows
 * of NR floats; columns past n are zero. Panels are contiguous, so the register-blocked kernel
 * reads them without the cache-set conflicts that a leading dimension of a multiple of 4 KiB
 * causes. B not transposed: one work-item per (panel, row), copying NR floats with vector
 * loads; neighbouring items read neighbouring lines of a row, a stream the hardware
 * prefetcher follows (items along a column read a line a page apart each). Launch:
 * (panels, kc). */
__kernel void clg_gemm_pack_b_rows(uint n, uint kc, uint k0,
                                   __global const float *B, ulong b_off, uint ldb,
                                   __global float *P)
{
    uint t = get_global_id(0), p = get_global_id(1);
    if (t * NR >= n)
        return;
    const __global float *src = B + b_off + (size_t)(k0 + p) * ldb + (size_t)t * NR;
    __global float *dst = P + ((size_t)t * kc + p) * NR;
    if ((t + 1) * NR <= n) {
#pragma unroll
        for (int v = 0; v < NV; v++)
            CLG_STORE16(vload16(v, src), dst + 16 * v);
    } else {
        for (uint l = 0; l < NR; l++)
            dst[l] = t * NR + l < n ? src[l] : 0.0f;
    }
}

/* The same for a product whose columns run across batch entries (clg_gemm_reg's fold_n):
 * column j is entry j / fold_n's column j % fold_n, entries sb apart. Launch: (panels, kc). */
__kernel void clg_gemm_pack_b_fold(uint n, uint kc, uint k0, __global const float *B,
                                   ulong b_off, uint ldb, __global float *P, uint fold_n,
                                   ulong sb)
{
    uint t = get_global_id(0), p = get_global_id(1);
    if (t * NR >= n)
        return;
    uint j = t * NR, pix = j % fold_n;
    const __global float *src = B + b_off + (size_t)(j / fold_n) * sb + (size_t)(k0 + p) * ldb;
    __global float *dst = P + ((size_t)t * kc + p) * NR;
    if (j + NR <= n && pix + NR <= fold_n + fold_n) {
        /* vector copies: the lanes before the cut from this entry, the rest from the next
         * one's start (each load stays inside B: a block crosses only where a next entry
         * follows) */
        int cut = (int)(fold_n - pix);
        const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#pragma unroll
        for (int v = 0; v < NV; v++) {
            float16 here = vload16(0, src + pix + 16 * v);
            if (cut < 16 * (v + 1))
                here = select(vload16(0, src + sb - fold_n + pix + 16 * v), here,
                              lane + 16 * v < cut);
            CLG_STORE16(here, dst + 16 * v);
        }
        return;
    }
    for (uint l = 0; l < NR; l++) {
        dst[l] = j + l < n ? src[pix] : 0.0f;
        if (++pix == fold_n) {
            pix = 0;
            src += sb;
        }
    }
}

/* The same for B stored transposed (n x k): one work-item per column, reading its k values
 * contiguously. Launch: (NR, panels). */
__kernel void clg_gemm_pack_b_cols(uint n, uint kc, uint k0,
                                   __global const float *B, ulong b_off, uint ldb,
                                   __global float *P)
{
    uint lane = get_global_id(0), t = get_global_id(1);
    uint j = t * NR + lane;
    __global float *dst = P + (size_t)t * kc * NR + lane;
    const __global float *src = B + b_off + (size_t)min(j, n - 1) * ldb + k0;
    for (uint p = 0; p < kc; p++)
        dst[(size_t)p * NR] = j < n ? src[p] : 0.0f;
}

/* Packs columns [k0, k0+kc) of op(A) for clg_gemm_reg: panel t holds rows [t*MR, t*MR+MR) as
 * kc steps of MR floats (rows past m repeat row m-1), so that the product reads A as one
 * stream with a constant step instead of MR rows with a step known only at run time. One
 * work-item per (step, panel): neighbouring items read neighbouring floats of each row.
 * Launch: (kc, panels). */
__kernel void clg_gemm_pack_a(uint m, uint kc, uint k0, __global const float *A, ulong a_off,
                              uint lda, uint ta, __global float *P)
{
    uint p = get_global_id(0), t = get_global_id(1);
    if (p >= kc)
        return;
    __global float *dst = P + ((size_t)t * kc + p) * MR;
    A += a_off;
#pragma unroll
    for (int r = 0; r < MR; r++) {
        size_t row = min(t * MR + (uint)r, m - 1);
        dst[r] = ta ? A[(size_t)(k0 + p) * lda + row] : A[row * lda + k0 + p];
    }
}

__kernel void clg_gemm_reg(uint m, uint n, uint k, float alpha, float beta,
                           __global const float *A, ulong a_off, uint lda, uint ta, ulong sa,
                           __global const float *B, ulong b_off, uint ldb, ulong sb,
                           __global float *C, ulong c_off, uint ldc, ulong sc, uint pf_c,
                           uint pf_b, __global const float *bias, ulong bias_off, uint epilogue,
                           float relu_max, uint fold_n, ulong fold_sc,
                           __global const float *res, ulong res_off, uint residual)
{
    uint tn = get_global_id(0), tm = get_global_id(1);
    size_t batch = get_global_id(2);
    uint row0 = tm * MR;
    uint col0 = tn * NR, keep_from = col0;
#if B_PANEL == 2
    /* Every work-item must reach the barriers: padding items compute a clamped tile. */
    int padding = col0 >= n || row0 >= m;
    row0 = min(row0, m - 1);
    if (col0 >= n)
        col0 = keep_from = n - NR;
#else
    if (col0 >= n || row0 >= m)
        return; /* padding of a rounded-up launch */
#endif
    A += a_off + batch * sa;
    C += c_off + batch * sc;
    res += res_off + batch * sc; /* laid out as C */
#if B_PANEL == 1
    /* Panel tn: k rows of NR floats (ldb is unused). */
    const __global float *b = B + b_off + batch * sb + (size_t)tn * k * NR;
#else
    if (col0 + NR > n) {
        /* Last tile: shift left so every load stays inside B; the columns that the previous
         * tile owns are computed but not stored. */
        col0 = n - NR;
    }
    const __global float *b = B + b_off + batch * sb + col0;
#endif
    /* ta 2: A packed by clg_gemm_pack_a, row tile row0 / MR's panel lda steps long */
    const __global float *pa = A + (size_t)(row0 / MR) * lda * MR;
    /* Rows past m read row m-1 (valid memory); their results are not stored. */
    const __global float *a[MR];
    size_t a_step = ta ? lda : 1;
#pragma unroll
    for (int r = 0; r < MR; r++) {
        size_t row = min(row0 + (uint)r, m - 1);
        a[r] = ta ? A + row : A + row * lda;
    }
    /* This block of C is read (beta != 0) or written after the k loop: fetch its lines now so
     * that their misses overlap the products instead of stalling the stores (rows of C lie far
     * apart, beyond what the hardware prefetcher follows). With short k there is too little
     * to overlap: pf_c also fetches the lines of a tile further along the row. The residual
     * summed in the epilogue likewise (ResNet-50's 64 -> 256 channel products on 56x56 with
     * their block's sum waited on it: twice the time of those without). */
#pragma unroll
    for (int r = 0; r < MR && !fold_n; r++) {
        size_t at = (size_t)min(row0 + (uint)r, m - 1) * ldc + col0;
#pragma unroll
        for (int v = 0; v < NR; v += 16) {
            CLG_PREFETCH(C + at + v, 1);
            if (pf_c)
                CLG_PREFETCH(C + at + v + pf_c, 1);
            if (residual) {
                CLG_PREFETCH(res + at + v, 0);
                if (pf_c)
                    CLG_PREFETCH(res + at + v + pf_c, 0);
            }
        }
    }
    float16 acc[MR][NV];
#pragma unroll
    for (int r = 0; r < MR; r++)
#pragma unroll
        for (int v = 0; v < NV; v++)
            acc[r][v] = (float16)(0.0f);
    size_t ap = 0;
#if B_PANEL == 2
#define GEMM_REG_B(p, v) staged[(p) * NV + (v)]
#define GEMM_REG_B_NEXT
#elif B_PANEL == 1
#define GEMM_REG_B(p, v) vload16(v, b)
    /* the panel PF_PANEL steps ahead: a stream the hardware alone kept the loads waiting on
     * (an Intel Xeon: L2's latency on every second vector of B) */
#define GEMM_REG_B_NEXT                                                                          \
    do {                                                                                         \
        _Pragma("unroll") for (int pv = 0; pv < NV && PF_PANEL; pv++)                            \
            CLG_PREFETCH(b + PF_PANEL * NR + 16 * pv, 0);                                        \
        b += NR;                                                                                 \
    } while (0)
#else
#define GEMM_REG_B(p, v) vload16(v, b)
    /* B in place: each step of k reads new lines a row apart, a stride the hardware's
     * prefetchers do not follow beyond 2 KiB; pf_b floats ahead (rows ahead, or along the
     * row for a later tile) */
#define GEMM_REG_B_NEXT                                                                          \
    do {                                                                                         \
        if (pf_b)                                                                                \
            _Pragma("unroll") for (int pv = 0; pv < NV; pv++)                                     \
                CLG_PREFETCH(b + pf_b + 16 * pv, 0);                                             \
        b += ldb;                                                                                \
    } while (0)
#endif
    /* kn steps of k, A's column read as A_AT(r) and stepped by A_NEXT: packed A (one pointer,
     * constant offsets) and A in place have loops of their own. */
#define GEMM_REG_K_LOOP(kn, A_AT, A_NEXT)                                                        \
    for (uint p = 0; p < (kn); p++) {                                                            \
        float16 bv[NV];                                                                          \
        _Pragma("unroll") for (int v = 0; v < NV; v++) bv[v] = GEMM_REG_B(p, v);                 \
        GEMM_REG_B_NEXT;                                                                         \
        _Pragma("unroll") for (int r = 0; r < MR; r++) {                                         \
            float av = A_AT(r);                                                                  \
            _Pragma("unroll") for (int v = 0; v < NV; v++)                                       \
                acc[r][v] = fma((float16)(av), bv[v], acc[r][v]);                                \
        }                                                                                        \
        A_NEXT;                                                                                  \
    }
#define GEMM_REG_A_PACKED(r) pa[r]
#define GEMM_REG_A_IN_PLACE(r) a[r][ap]
#if B_PANEL == 2
    __local float16 staged[KC * NV];
    for (uint k0 = 0; k0 < k; k0 += KC) {
        uint kn = min((uint)KC, k - k0);
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous block is used up */
        for (uint p = get_local_id(1); p < kn; p += get_local_size(1))
#pragma unroll
            for (int v = 0; v < NV; v++)
                staged[p * NV + v] = vload16(v, b + (size_t)(k0 + p) * ldb);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (ta == 2)
            GEMM_REG_K_LOOP(kn, GEMM_REG_A_PACKED, pa += MR)
        else
            GEMM_REG_K_LOOP(kn, GEMM_REG_A_IN_PLACE, ap += a_step)
    }
#else
    if (ta == 2)
        GEMM_REG_K_LOOP(k, GEMM_REG_A_PACKED, pa += MR)
    else
        GEMM_REG_K_LOOP(k, GEMM_REG_A_IN_PLACE, ap += a_step)
#endif
#undef GEMM_REG_K_LOOP
#undef GEMM_REG_A_PACKED
#undef GEMM_REG_A_IN_PLACE
#undef GEMM_REG_B
#undef GEMM_REG_B_NEXT
#if B_PANEL == 2
    if (padding)
        return;
#endif
    /* fold_n: the columns run across batch entries of fold_n columns, fold_sc apart in C (a
     * 1x1 convolution on small planes, its images side by side); a block whose columns
     * cross into the next entry stores lanes [0, cut) and [cut, NR) as two runs */
    uint cut = NR;
    size_t c_at = col0;
    if (fold_n) {
        uint pix = col0 % fold_n;
        c_at = (size_t)(col0 / fold_n) * fold_sc + pix;
        cut = min((uint)NR, fold_n - pix);
    }
    int full = row0 + MR <= m && keep_from == col0 && col0 + NR <= n && cut == NR;
#pragma unroll
    for (int r = 0; r < MR; r++) {
        uint row = row0 + (uint)r;
        if (row >= m)
            break;
        __global float *c = C + (size_t)row * ldc + c_at;
        const __global float *rs = res + (size_t)row * ldc + c_at;
        /* the epilogue (a 1x1 convolution's bias per row (bit 1), then with `residual` the
         * sum with a tensor laid out as C (a residual block's), then the activation of
         * bits >> 1: its ReLU, capped, or SiLU), beta 0 */
        float add = epilogue & 1u ? bias[bias_off + row] : 0.0f;
#pragma unroll
        for (int v = 0; v < NV; v++) {
            float16 out = alpha * acc[r][v];
            float bv = add;
            if (residual) {
                float16 sum;
                if (full) {
                    sum = vload16(v, rs);
                } else {
                    float rv[16];
                    for (uint l = 0; l < 16; l++) { /* the lanes stored below, where they are */
                        uint lane = (uint)v * 16 + l, col = col0 + lane;
                        rv[l] = col >= keep_from && col < n
                                    ? rs[lane < cut ? lane : fold_sc - fold_n + lane]
                                    : 0.0f;
                    }
                    sum = vload16(0, rv);
                }
                out = (out + bv) + sum;
                bv = 0.0f;
            }
            if (epilogue)
                out = clg_epi16(epilogue >> 1, relu_max, out + bv);
            if (full) {
                if (beta != 0.0f)
                    out = fma((float16)(beta), vload16(v, c), out);
                CLG_STORE16(out, c + 16 * v);
            } else {
                float vals[16];
                vstore16(out, 0, vals);
                for (uint l = 0; l < 16; l++) {
                    uint lane = (uint)v * 16 + l, col = col0 + lane;
                    /* past the cut: the next entry's columns from its start */
                    __global float *at = lane < cut ? c + lane : c + fold_sc - fold_n + lane;
                    if (col >= keep_from && col < n)
                        *at = beta == 0.0f ? vals[l] : fma(beta, *at, vals[l]);
                }
            }
        }
    }
}

/* Split-K: C = sum over `slices` partial products (each m x n, ldc-strided, one after the other
 * in P) + beta * C, summed in slice order so that results do not depend on scheduling. */
__kernel void clg_gemm_reduce(__global const float *P, uint slices, uint m, uint n, float beta,
                              __global float *C, ulong c_off, uint ldc)
{
    uint j = get_global_id(0), i = get_global_id(1);
    if (i >= m || j >= n)
        return;
    size_t at = (size_t)i * n + j, part = (size_t)m * n;
    float sum = 0.0f;
    for (uint s = 0; s < slices; s++)
        sum += P[s * part + at];
    __global float *c = C + c_off + (size_t)i * ldc + j;
    *c = beta == 0.0f ? sum : fma(beta, *c, sum);
}
