/* SGEMM for GPUs, row-major like gemm.cl: C = alpha * op(A) * op(B) + beta * C.
 *
 * clg_gemm_tile  each work-group computes an MWG x NWG tile of C with NDIMC x MDIMC
 *                work-items; each work-item an MWI x NWI register block whose rows are MDIMC
 *                apart and columns NDIMC apart, so that neighbouring work-items read
 *                neighbouring words of local memory (no bank conflicts) and write neighbouring
 *                columns of C (coalesced). KWG rows of k at a time, the A and B tiles are
 *                copied into local memory by the whole group with loads of VW floats along the
 *                matrices' contiguous dimension (coalesced whatever the transposes, which are
 *                compile-time here), zero-filled past the edges: any shape is read in place,
 *                without padding copies. DB=1 keeps two tiles of each, so the next one is
 *                loaded while this one is multiplied (one barrier a step instead of two).
 *                Tiles (and batch entries) past the grid are looped over, so a launch never
 *                needs more than 65535 groups in a dimension (a limit on some drivers).
 *
 * Tunables (-D, set from the per-device table or the tuner; see clg_gemm_params):
 *   MWG, NWG     rows and columns of the group's tile of C
 *   KWG          k per local-memory step (a multiple of KWI and VW)
 *   MDIMC, NDIMC work-items along m and n (MWG % MDIMC == 0, NWG % NDIMC == 0)
 *   VW           floats per global load: 1, 2, 4 or 8 (divides MWG, NWG and KWG)
 *   KWI          unroll of the k loop
 *   DB           0 or 1: double-buffered local tiles
 *   TA, TB       0 or 1: A or B stored transposed
 */
#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef VW
#define VW 4
#endif
#ifndef KWI
#define KWI 2
#endif
#ifndef DB
#define DB 0
#endif
#ifndef TA
#define TA 0
#endif
#ifndef TB
#define TB 0
#endif

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define GROUP (MDIMC * NDIMC)

/* Local tiles keep the layout of their source (rows of the contiguous dimension), each row
 * padded by one float: reads down a column then fall in different banks. A(r, p) is row r,
 * step p of op(A)'s tile; B(c, p) column c, step p of op(B)'s. */
#if TA
#define A_TILE (KWG * (MWG + 1))
#define A_AT(s, r, p) (s)[(p) * (MWG + 1) + (r)]
#else
#define A_TILE (MWG * (KWG + 1))
#define A_AT(s, r, p) (s)[(r) * (KWG + 1) + (p)]
#endif
#if TB
#define B_TILE (NWG * (KWG + 1))
#define B_AT(s, c, p) (s)[(c) * (KWG + 1) + (p)]
#else
#define B_TILE (KWG * (NWG + 1))
#define B_AT(s, c, p) (s)[(p) * (NWG + 1) + (c)]
#endif

#define CLG_CAT_(a, b) a##b
#define CLG_CAT(a, b) CLG_CAT_(a, b)
#define VLOAD CLG_CAT(vload, VW)
#define VSTORE CLG_CAT(vstore, VW)

/* Copies a rows x cols block of a row-major matrix (src, leading dimension ld) into local
 * memory (rows of cols + 1 floats), reading VW floats at a time; elements at or past
 * rows_in / cols_in are zero. Each work-item of the group takes every GROUP-th vector, so
 * neighbouring work-items read neighbouring vectors of a row. */
void clg_tile_stage(__local float *dst, const __global float *src, uint ld, uint rows, uint cols,
                  uint rows_in, uint cols_in, uint lid)
{
    const uint vecs = cols / VW;
    for (uint e = lid; e < rows * vecs; e += GROUP) {
        uint r = e / vecs, c = (e % vecs) * VW;
        __local float *d = dst + r * (cols + 1) + c;
        const __global float *s = src + (size_t)r * ld + c;
        if (r < rows_in && c + VW <= cols_in) {
#if VW == 1
            d[0] = s[0];
#else
            VSTORE(VLOAD(0, s), 0, d);
#endif
        } else {
            for (uint u = 0; u < VW; u++)
                d[u] = r < rows_in && c + u < cols_in ? s[u] : 0.0f;
        }
    }
}

/* Step k0's tiles of op(A) (rows row0..) and op(B) (columns col0..) into a_l and b_l. */
void clg_tile_stage_step(__local float *a_l, __local float *b_l, const __global float *A, uint lda,
                       const __global float *B, uint ldb, uint m, uint n, uint k, uint row0,
                       uint col0, uint k0, uint lid)
{
#if TA /* A stored k x m: rows of the tile are k */
    clg_tile_stage(a_l, A + (size_t)k0 * lda + row0, lda, KWG, MWG, k - k0, m - row0, lid);
#else
    clg_tile_stage(a_l, A + (size_t)row0 * lda + k0, lda, MWG, KWG, m - row0, k - k0, lid);
#endif
#if TB /* B stored n x k */
    clg_tile_stage(b_l, B + (size_t)col0 * ldb + k0, ldb, NWG, KWG, n - col0, k - k0, lid);
#else
    clg_tile_stage(b_l, B + (size_t)k0 * ldb + col0, ldb, KWG, NWG, k - k0, n - col0, lid);
#endif
}

/* acc += this step's tiles (a KWG-long product; zero-filled edges add nothing). */
#define TILE_MULTIPLY(a_l, b_l)                                                               \
    for (uint p0 = 0; p0 < KWG; p0 += KWI) {                                                  \
        _Pragma("unroll") for (uint u = 0; u < KWI; u++) {                                    \
            float av[MWI], bv[NWI];                                                           \
            _Pragma("unroll") for (uint i = 0; i < MWI; i++)                                  \
                av[i] = A_AT(a_l, lm + i * MDIMC, p0 + u);                                    \
            _Pragma("unroll") for (uint j = 0; j < NWI; j++)                                  \
                bv[j] = B_AT(b_l, ln + j * NDIMC, p0 + u);                                    \
            _Pragma("unroll") for (uint i = 0; i < MWI; i++)                                  \
                _Pragma("unroll") for (uint j = 0; j < NWI; j++)                              \
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);                                 \
        }                                                                                     \
    }

/* The k loop of one tile: acc += the product over k in [k_begin, k_end), where
 * STAGE(a_l, b_l, k0) fills the tiles of step k0 (zero past the edges). */
#if DB
/* Step s multiplies buffer s % 2 while the group fills the other with step s + 1; the barrier
 * at a step's end orders both against the next step. */
#define TILE_PRODUCT(k_begin, k_end, STAGE)                                                   \
    {                                                                                         \
        STAGE(a_local, b_local, (k_begin));                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        uint cur = 0;                                                                         \
        for (uint k0 = (k_begin); k0 < (k_end); k0 += KWG, cur ^= 1) {                        \
            if (k0 + KWG < (k_end))                                                           \
                STAGE(a_local + (cur ^ 1) * A_TILE, b_local + (cur ^ 1) * B_TILE, k0 + KWG);  \
            __local const float *a_l = a_local + cur * A_TILE, *b_l = b_local + cur * B_TILE; \
            TILE_MULTIPLY(a_l, b_l)                                                           \
            barrier(CLK_LOCAL_MEM_FENCE);                                                     \
        }                                                                                     \
    }
#else
#define TILE_PRODUCT(k_begin, k_end, STAGE)                                                   \
    for (uint k0 = (k_begin); k0 < (k_end); k0 += KWG) {                                      \
        STAGE(a_local, b_local, k0);                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        TILE_MULTIPLY(a_local, b_local)                                                       \
        barrier(CLK_LOCAL_MEM_FENCE); /* the tiles are used up before the next step */        \
    }
#endif

/* The work-group's tiles (and batch entries or k slices along dimension 2) in a grid that may
 * be smaller than their count; inside, row0 and col0 are the tile's first row and column, acc
 * its work-item's block, zeroed. */
#define FOR_EACH_TILE(tiles_m, tiles_n, batch)                                                \
    for (uint bi = get_group_id(2); bi < (batch); bi += get_num_groups(2))                    \
    for (uint tm = get_group_id(1); tm < (tiles_m); tm += get_num_groups(1))                  \
    for (uint tn = get_group_id(0); tn < (tiles_n); tn += get_num_groups(0))

#define TILE_BEGIN                                                                            \
    uint row0 = tm * MWG, col0 = tn * NWG;                                                    \
    float acc[MWI][NWI];                                                                      \
    _Pragma("unroll") for (uint i = 0; i < MWI; i++)                                          \
        _Pragma("unroll") for (uint j = 0; j < NWI; j++)                                      \
            acc[i][j] = 0.0f

/* STORE(row, col, value) for each element of the block inside m x n. */
#define TILE_STORE(m, n, STORE)                                                               \
    _Pragma("unroll") for (uint i = 0; i < MWI; i++) {                                        \
        uint row = row0 + lm + i * MDIMC;                                                     \
        _Pragma("unroll") for (uint j = 0; j < NWI; j++) {                                    \
            uint col = col0 + ln + j * NDIMC;                                                 \
            if (row < (m) && col < (n))                                                       \
                STORE(row, col, acc[i][j]);                                                   \
        }                                                                                     \
    }

#define TILE_LOCALS                                                                           \
    __local float a_local[(DB + 1) * A_TILE];                                                 \
    __local float b_local[(DB + 1) * B_TILE];                                                 \
    const uint ln = get_local_id(0), lm = get_local_id(1), lid = lm * NDIMC + ln

#ifndef CONV
#define CONV 0
#endif

#if CONV == 0
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void clg_gemm_tile(uint m, uint n, uint k, float alpha, float beta,
                   __global const float *A, ulong a_off, uint lda, ulong sa,
                   __global const float *B, ulong b_off, uint ldb, ulong sb,
                   __global float *C, ulong c_off, uint ldc, ulong sc,
                   uint tiles_n, uint tiles_m, uint batch)
{
    TILE_LOCALS;
#define GEMM_STAGE(a_l, b_l, k0)                                                              \
    clg_tile_stage_step(a_l, b_l, a, lda, b, ldb, m, n, k, row0, col0, k0, lid)
/* beta == 0 must not read C: it may hold NaN */
#define GEMM_STORE(row, col, v)                                                               \
    {                                                                                         \
        __global float *cp = c + (size_t)(row) * ldc + (col);                                 \
        *cp = beta == 0.0f ? alpha * (v) : fma(beta, *cp, alpha * (v));                       \
    }
    FOR_EACH_TILE(tiles_m, tiles_n, batch) {
        const __global float *a = A + a_off + bi * sa, *b = B + b_off + bi * sb;
        __global float *c = C + c_off + bi * sc;
        TILE_BEGIN;
        TILE_PRODUCT(0, k, GEMM_STAGE)
        TILE_STORE(m, n, GEMM_STORE)
    }
}
#else
/* Implicit-GEMM convolutions: the products of im2col + GEMM with the columns gathered into the
 * local tiles straight from the tensors (no workspace). One group of channels per launch (the
 * host offsets x, w and the output to it); C and K are that group's channels in and out, x is
 * N x C_all x H x W (img_in floats an image), the output or dy N x K_all x P x Q (img_out). */
typedef struct conv_geom {
    uint C, H, W, K, R, S, P, Q, sh, sw, pt, pl, dh, dw;
    ulong img_in, img_out;
} conv_geom;

#define CONV_ARGS                                                                             \
    uint C, uint H, uint W, uint K, uint R, uint S, uint P, uint Q, uint sh, uint sw,         \
        uint pt, uint pl, uint dh, uint dw, ulong img_in, ulong img_out
#define CONV_GEOM {C, H, W, K, R, S, P, Q, sh, sw, pt, pl, dh, dw, img_in, img_out}

/* x at column-matrix row kk = (ci, kh, kw) and output pixel j = (image, oh, ow); 0 in the
 * padding. */
float clg_conv_x_at(const __global float *x, const conv_geom *g, uint kk, uint j)
{
    uint rs = g->R * g->S, ci = kk / rs, r = kk - ci * rs, kh = r / g->S, kw = r - kh * g->S;
    uint pq = g->P * g->Q, ni = j / pq, p = j - ni * pq, oh = p / g->Q, ow = p - oh * g->Q;
    int ih = (int)(oh * g->sh + kh * g->dh) - (int)g->pt;
    int iw = (int)(ow * g->sw + kw * g->dw) - (int)g->pl;
    if (ih < 0 || ih >= (int)g->H || iw < 0 || iw >= (int)g->W)
        return 0.0f;
    return x[ni * g->img_in + ((size_t)ci * g->H + (uint)ih) * g->W + (uint)iw];
}

#define STAGE_GATHER(dst, ROWS, COLS, ELEM)                                                   \
    for (uint e = lid; e < (ROWS) * (COLS); e += GROUP) {                                     \
        uint r_ = e / (COLS), c_ = e - r_ * (COLS);                                           \
        (dst)[r_ * ((COLS) + 1) + c_] = ELEM(r_, c_);                                         \
    }

/* Forward: y (K x N*P*Q per image block) = w (K x C*R*S) . columns of x, then the bias (of
 * this group's channels) and ReLU where asked. */
#if CONV == 1
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void clg_conv_tile_fwd(__global const float *x, ulong x_off, __global const float *w,
                       ulong w_off, __global float *y, ulong y_off, uint N, CONV_ARGS,
                       uint tiles_n, uint tiles_m, __global const float *bias, ulong bias_off,
                       uint has_bias, uint act, float relu_max)
{
    TILE_LOCALS;
    const conv_geom g = CONV_GEOM;
    const uint m = K, n = N * P * Q, k = C * R * S, pq = P * Q;
    x += x_off, w += w_off, y += y_off;
#define X_AT(r_, c_) (k0 + (r_) < k && col0 + (c_) < n ? clg_conv_x_at(x, &g, k0 + (r_), col0 + (c_)) : 0.0f)
#define FWD_STAGE(a_l, b_l, kstep)                                                            \
    {                                                                                         \
        uint kstep_ = (kstep);                                                                \
        clg_tile_stage(a_l, w + (size_t)row0 * k + kstep_, k, MWG, KWG, m - row0, k - kstep_, lid); \
        {                                                                                     \
            const uint k0 = kstep_;                                                           \
            STAGE_GATHER(b_l, KWG, NWG, X_AT)                                                 \
        }                                                                                     \
    }
/* the epilogue: bias (output channel `row`) and the activation act (clg_epi) */
#define FWD_STORE(row, col, v)                                                                \
    {                                                                                         \
        float o_ = has_bias ? (v) + bias[bias_off + (row)] : (v);                             \
        y[(col) / pq * img_out + (size_t)(row) * pq + (col) % pq] = clg_epi(act, relu_max, o_);   \
    }
    FOR_EACH_TILE(tiles_m, tiles_n, 1) {
        TILE_BEGIN;
        TILE_PRODUCT(0, k, FWD_STAGE)
        TILE_STORE(m, n, FWD_STORE)
    }
}
#endif

/* Backward data: dx (C x N*H*W) = w^T (C x K*R*S) . dy gathered: row kk = (co, kh, kw), pixel
 * j = (image, ih, iw) takes dy at the output pixel whose window puts tap (kh, kw) on (ih, iw),
 * if there is one (with strides, most taps have none: zero). */
#if CONV == 2
float clg_conv_dy_at(const __global float *dy, const conv_geom *g, uint kk, uint j)
{
    uint rs = g->R * g->S, co = kk / rs, r = kk - co * rs, kh = r / g->S, kw = r - kh * g->S;
    uint hw = g->H * g->W, ni = j / hw, p = j - ni * hw, ih = p / g->W, iw = p - ih * g->W;
    int oh = (int)(ih + g->pt) - (int)(kh * g->dh), ow = (int)(iw + g->pl) - (int)(kw * g->dw);
    if (oh < 0 || ow < 0 || oh % g->sh || ow % g->sw)
        return 0.0f;
    oh /= g->sh, ow /= g->sw;
    if (oh >= (int)g->P || ow >= (int)g->Q)
        return 0.0f;
    return dy[ni * g->img_out + ((size_t)co * g->P + (uint)oh) * g->Q + (uint)ow];
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void clg_conv_tile_bwd_data(__global const float *dy, ulong dy_off, __global const float *w,
                            ulong w_off, __global float *dx, ulong dx_off, uint N, CONV_ARGS,
                            uint tiles_n, uint tiles_m)
{
    TILE_LOCALS;
    const conv_geom g = CONV_GEOM;
    const uint m = C, n = N * H * W, k = K * R * S, rs = R * S, hw = H * W;
    dy += dy_off, w += w_off, dx += dx_off;
/* w^T: row ci, column kk = (co, tap) is w[co][ci][tap] */
#define WT_AT(r_, c_) (row0 + (r_) < m && k0 + (c_) < k                                       \
        ? w[((size_t)((k0 + (c_)) / rs) * C + row0 + (r_)) * rs + (k0 + (c_)) % rs] : 0.0f)
#define DY_AT(r_, c_) (k0 + (r_) < k && col0 + (c_) < n ? clg_conv_dy_at(dy, &g, k0 + (r_), col0 + (c_)) : 0.0f)
#define BWD_DATA_STAGE(a_l, b_l, kstep)                                                          \
    {                                                                                         \
        uint kstep_ = (kstep);                                                                \
        {                                                                                     \
            const uint k0 = kstep_;                                                           \
            STAGE_GATHER(a_l, MWG, KWG, WT_AT)                                                \
            STAGE_GATHER(b_l, KWG, NWG, DY_AT)                                                \
        }                                                                                     \
    }
#define BWD_DATA_STORE(row, col, v) dx[(col) / hw * img_in + (size_t)(row) * hw + (col) % hw] = (v)
    FOR_EACH_TILE(tiles_m, tiles_n, 1) {
        TILE_BEGIN;
        TILE_PRODUCT(0, k, BWD_DATA_STAGE)
        TILE_STORE(m, n, BWD_DATA_STORE)
    }
}
#endif

/* Weight gradient: dw (K x C*R*S) = dy (K x N*P*Q) . columns of x transposed, the k range (the
 * pixels of every image) cut into `slices` of kslice along dimension 2: slice s writes its
 * partial product densely at out + s * K * C*R*S (the host sums them in order), or straight
 * into dw when there is one slice. */
#if CONV == 3
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void clg_conv_tile_bwd_weights(__global const float *x, ulong x_off, __global const float *dy,
                               ulong dy_off, __global float *out, ulong out_off, uint N,
                               CONV_ARGS, uint tiles_n, uint tiles_m, uint slices, uint kslice)
{
    TILE_LOCALS;
    const conv_geom g = CONV_GEOM;
    const uint m = K, n = C * R * S, k = N * P * Q, pq = P * Q;
    x += x_off, dy += dy_off, out += out_off;
    uint k_end = 0;
#define DYW_AT(r_, c_) (row0 + (r_) < m && k0 + (c_) < k_end                                  \
        ? dy[(k0 + (c_)) / pq * img_out + (size_t)(row0 + (r_)) * pq + (k0 + (c_)) % pq] : 0.0f)
#define XW_AT(r_, c_) (k0 + (c_) < k_end && col0 + (r_) < n ? clg_conv_x_at(x, &g, col0 + (r_), k0 + (c_)) : 0.0f)
#define BWD_W_STAGE(a_l, b_l, kstep)                                                             \
    {                                                                                         \
        uint kstep_ = (kstep);                                                                \
        {                                                                                     \
            const uint k0 = kstep_;                                                           \
            STAGE_GATHER(a_l, MWG, KWG, DYW_AT)                                               \
            STAGE_GATHER(b_l, NWG, KWG, XW_AT)                                                \
        }                                                                                     \
    }
#define BWD_W_STORE(row, col, v) part[(size_t)(row) * n + (col)] = (v)
    FOR_EACH_TILE(tiles_m, tiles_n, slices) {
        __global float *part = out + (size_t)bi * m * n;
        uint k_begin = bi * kslice;
        k_end = min(k, k_begin + kslice);
        TILE_BEGIN;
        TILE_PRODUCT(k_begin, k_end, BWD_W_STAGE)
        TILE_STORE(m, n, BWD_W_STORE)
    }
}
#endif
#endif
