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

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void clg_gemm_tile(uint m, uint n, uint k, float alpha, float beta,
                   __global const float *A, ulong a_off, uint lda, ulong sa,
                   __global const float *B, ulong b_off, uint ldb, ulong sb,
                   __global float *C, ulong c_off, uint ldc, ulong sc,
                   uint tiles_n, uint tiles_m, uint batch)
{
    __local float a_local[(DB + 1) * A_TILE];
    __local float b_local[(DB + 1) * B_TILE];
    const uint ln = get_local_id(0), lm = get_local_id(1), lid = lm * NDIMC + ln;
    for (uint bi = get_group_id(2); bi < batch; bi += get_num_groups(2))
    for (uint tm = get_group_id(1); tm < tiles_m; tm += get_num_groups(1))
    for (uint tn = get_group_id(0); tn < tiles_n; tn += get_num_groups(0)) {
        const __global float *a = A + a_off + bi * sa, *b = B + b_off + bi * sb;
        uint row0 = tm * MWG, col0 = tn * NWG;
        float acc[MWI][NWI];
        _Pragma("unroll") for (uint i = 0; i < MWI; i++)
            _Pragma("unroll") for (uint j = 0; j < NWI; j++)
                acc[i][j] = 0.0f;
#if DB
        /* Step s multiplies buffer s % 2 while the group fills the other with step s + 1; the
         * barrier at a step's end orders both against the next step. */
        clg_tile_stage_step(a_local, b_local, a, lda, b, ldb, m, n, k, row0, col0, 0, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        uint cur = 0;
        for (uint k0 = 0; k0 < k; k0 += KWG, cur ^= 1) {
            if (k0 + KWG < k)
                clg_tile_stage_step(a_local + (cur ^ 1) * A_TILE, b_local + (cur ^ 1) * B_TILE, a, lda, b,
                           ldb, m, n, k, row0, col0, k0 + KWG, lid);
            __local const float *a_l = a_local + cur * A_TILE, *b_l = b_local + cur * B_TILE;
            TILE_MULTIPLY(a_l, b_l)
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#else
        for (uint k0 = 0; k0 < k; k0 += KWG) {
            clg_tile_stage_step(a_local, b_local, a, lda, b, ldb, m, n, k, row0, col0, k0, lid);
            barrier(CLK_LOCAL_MEM_FENCE);
            TILE_MULTIPLY(a_local, b_local)
            barrier(CLK_LOCAL_MEM_FENCE); /* the tiles are used up before the next step */
        }
#endif
        __global float *c = C + c_off + bi * sc;
        _Pragma("unroll") for (uint i = 0; i < MWI; i++) {
            uint row = row0 + lm + i * MDIMC;
            _Pragma("unroll") for (uint j = 0; j < NWI; j++) {
                uint col = col0 + ln + j * NDIMC;
                if (row < m && col < n) {
                    __global float *cp = c + (size_t)row * ldc + col;
                    /* beta == 0 must not read C: it may hold NaN */
                    *cp = beta == 0.0f ? alpha * acc[i][j] : fma(beta, *cp, alpha * acc[i][j]);
                }
            }
        }
    }
}
