/* The built-in GEMM: picks clg_gemm_small, clg_gemm_reg (in place or with packed B panels) or
 * clg_gemm_tile (GPUs, cl_kernels/gemm_tile.cl) for a problem and launches it. */
#include <stdint.h>
#include <stdio.h>
#include "gemm_internal.h"

enum { SMALL_LX = 16, SMALL_LY = 4 };

/* Split-K when a product has fewer output tiles than this and k is at least SPLIT_MIN_K: the
 * slices keep both cores busy (e.g. the weight gradient of a first conv layer: 25 x 32 x 36k). */
enum { SPLIT_MAX_TILES = 16, SPLIT_MIN_K = 4096, SPLIT_SLICES = 8 };

/* clg_gemm_reg's ta argument for A packed by clg_gemm_pack_a (params.pack_a_min_n) */
#define A_PACKED ((clg_transpose)2)

/* Build options: everything that shapes the program, so each combination is one cached
 * program, and nothing else: KC only where B is staged, PF_PANEL only where it is packed (a
 * value the kernel never reads made a program of its own, each kernel in it a compile of
 * about a second on POCL: a quick tuning pass from cold caches, which measures kc 128 to
 * 2048, took 137 s, now 112). */
static void program_options(const clg_gemm_params *p, int b_mode, char *out, size_t size)
{
    snprintf(out, size, "-DMR=%u -DNR=%u -DB_PANEL=%d -DKC=%u -DPF_PANEL=%u", p->mr, p->nr,
             b_mode, b_mode == CLG__GEMM_B_STAGED ? p->kc : 0u,
             b_mode == CLG__GEMM_B_PACKED ? p->pf_panel : 0u);
}

/* The same for clg_gemm_tile, whose transposes are compile-time (its tile loads follow them). */
void clg__gemm_tile_options(const clg_gemm_params *p, int ta, int tb, int conv, char *out,
                            size_t size)
{
    snprintf(out, size, "-DMWG=%u -DNWG=%u -DKWG=%u -DMDIMC=%u -DNDIMC=%u -DVW=%u -DKWI=%u -DDB=%u "
             "-DTA=%d -DTB=%d -DCONV=%d", p->mwg, p->nwg, p->kwg, p->mdimc, p->ndimc, p->vw, p->kwi,
             p->db, ta, tb, conv);
}

/* The leading arguments shared by every product kernel: m n k alpha beta. */
static void args_head(clg__launch *a, const clg__gemm_call *g, size_t k, float beta)
{
    clg__arg_u32(a, g->m);
    clg__arg_u32(a, g->n);
    clg__arg_u32(a, k);
    clg__arg_f32(a, g->alpha);
    clg__arg_f32(a, beta);
}

/* A matrix argument: buffer, offset, leading dimension, then (for kernels that take the
 * transposes as arguments) the transpose flag, and the batch stride. */
static void args_matrix(clg__launch *a, cl_mem m, size_t off, size_t ld, int trans_arg,
                        clg_transpose t, size_t stride)
{
    clg__arg_mem(a, m);
    clg__arg_u64(a, off);
    clg__arg_u32(a, ld);
    if (trans_arg)
        clg__arg_u32(a, t);
    clg__arg_u64(a, stride);
}

static void args_a(clg__launch *a, const clg__gemm_call *g, size_t extra_off)
{
    args_matrix(a, g->a, g->a_off + extra_off, g->lda, 1, g->ta, g->sa);
}

static void args_b(clg__launch *a, const clg__gemm_call *g)
{
    args_matrix(a, g->b, g->b_off, g->ldb, 1, g->tb, g->sb);
}

static void args_c(clg__launch *a, const clg__gemm_call *g)
{
    args_matrix(a, g->c, g->c_off, g->ldc, 0, CLG_NO_TRANS, g->sc);
}

static clg_status run_small(clg_ctx *ctx, const char *opts, const clg__gemm_call *g)
{
    clg__launch a;
    clg_status st = clg__launch_begin(ctx, "gemm", opts, "clg_gemm_small", &a);
    if (st != CLG_OK)
        return st;
    args_head(&a, g, g->k, g->beta);
    args_a(&a, g, 0);
    args_b(&a, g);
    args_c(&a, g);
    size_t local[3] = {SMALL_LX, SMALL_LY, 1};
    size_t global[3] = {g->n, g->m, g->batch};
    return clg__launch_run(&a, global, local);
}

const clg_gemm_params *clg__gemm_tile_fit(const clg_gemm_params *p, size_t m, size_t n,
                                          clg_gemm_params *small)
{
    if ((2 * m >= p->mwg && 2 * n >= p->nwg) || (p->mwg <= 16 && p->nwg <= 16))
        return p;
    *small = *p;
    small->mwg = small->nwg = small->kwg = 16;
    small->mdimc = small->ndimc = 8;
    small->vw = p->vw < 4 ? p->vw : 4;
    small->kwi = 2;
    small->db = 0;
    return small;
}

clg_status clg__gemm_tile_build(clg_ctx *ctx, const clg_gemm_params *p, int ta, int tb, int conv)
{
    clg_gemm_params small;
    const clg_gemm_params *tiles[2] = {p, clg__gemm_tile_fit(p, 1, 1, &small)};
    char opts[224];
    cl_program prog;
    clg_status st = CLG_OK;
    for (int i = 0; i < (tiles[1] == p ? 1 : 2) && st == CLG_OK; i++) {
        clg__gemm_tile_options(tiles[i], ta, tb, conv, opts, sizeof opts);
        st = clg__program_get(ctx, "gemm_tile", opts, &prog);
    }
    return st;
}

static clg_status run_tile(clg_ctx *ctx, const clg_gemm_params *p, const clg__gemm_call *g)
{
    clg_gemm_params small;
    p = clg__gemm_tile_fit(p, g->m, g->n, &small);
    char opts[192];
    clg__gemm_tile_options(p, g->ta == CLG_TRANS, g->tb == CLG_TRANS, 0, opts, sizeof opts);
    clg__launch a;
    clg_status st = clg__launch_begin(ctx, "gemm_tile", opts, "clg_gemm_tile", &a);
    if (st != CLG_OK)
        return st;
    size_t tiles_n = (g->n + p->nwg - 1) / p->nwg, tiles_m = (g->m + p->mwg - 1) / p->mwg;
    args_head(&a, g, g->k, g->beta);
    /* no transpose flags: they are in the program */
    args_matrix(&a, g->a, g->a_off, g->lda, 0, g->ta, g->sa);
    args_matrix(&a, g->b, g->b_off, g->ldb, 0, g->tb, g->sb);
    args_c(&a, g);
    clg__arg_u32(&a, tiles_n);
    clg__arg_u32(&a, tiles_m);
    clg__arg_u32(&a, g->batch);
    size_t local[3] = {p->ndimc, p->mdimc, 1};
    size_t global[3] = {clg__grid_groups(tiles_n) * p->ndimc, clg__grid_groups(tiles_m) * p->mdimc,
                        clg__grid_groups(g->batch)}; /* the kernel loops past the grid */
    return clg__launch_run(&a, global, local);
}

/* Prefetch distances for clg_gemm_reg (measured on a Zen 3 VM, paired runs in one process):
 * C two tiles ahead along its rows when k is short (32 x 50176 x 25: 23-29 -> 31-39 GFLOP/s);
 * B in place with rows a page or more apart one tile ahead along the row (64 x 12544 x 800:
 * 47-59 -> 63-70; elsewhere that cost: 1024 x 64 x 3136 74-89 -> 62-73). On an Intel Xeon
 * (family 6 model 207, alternating runs of one-layer networks at batch 32) B in place
 * pf_panel rows ahead where k has them (the row's 32 as for packed panels) and at least
 * PF_B_ROWS_MIN_TILES row tiles read each block of B: ResNet-50's 1x1 products 512 -> 256
 * channels on 28x28 22.6 -> 19.3 ms, 256 -> 64 on 56x56 10.7 -> 10.0 (8, 12, 16 rows: the
 * same), MobileNet-v2's 192 -> 32 on 28x28 1.55 -> 0.95; with fewer row tiles a block is a
 * stream read once, and the next tile along the row is what to fetch (96 -> 24 channels on
 * 56x56: 1.68 ms that way, 2.37 rows ahead). */
enum { PF_C_MAX_K = 64, PF_C_TILES = 2, PF_B_MIN_LD = 1024, PF_B_MIN_K = 64,
       PF_B_ROWS_MIN_TILES = 4 };

/* How far ahead (floats) clg_gemm_reg prefetches B read in place over k rows. */
static unsigned prefetch_b(const clg_gemm_params *p, const clg__gemm_call *g, size_t k)
{
    size_t tiles_m = (g->m + p->mr - 1) / p->mr;
    if (p->pf_panel && k >= PF_B_MIN_K && tiles_m >= PF_B_ROWS_MIN_TILES &&
        g->ldb <= UINT32_MAX / p->pf_panel)
        return (unsigned)(p->pf_panel * g->ldb);
    return g->ldb >= PF_B_MIN_LD ? p->nr : 0;
}

/* clg_gemm_reg over k rows [k0, k0+k) of the problem; B is either the original (in place) or
 * packed panels in `panels` (then batch must be 1 for this launch). */
static clg_status run_reg(clg_ctx *ctx, const clg_gemm_params *p, const char *opts,
                          const clg__gemm_call *g, size_t k0, size_t k, float beta, cl_mem panels,
                          int staged, const clg__gemm_call *folded)
{
    /* the epilogue with the launch that writes the final C: the last of k, beta 0 */
    clg__gemm_epilogue *epi = g->epi && beta == 0.0f && k0 + k == g->k ? g->epi : NULL;
    clg__launch a;
    clg_status st = clg__launch_begin(ctx, "gemm", opts, "clg_gemm_reg", &a);
    if (st != CLG_OK)
        return st;
    args_head(&a, g, k, beta);
    args_a(&a, g, g->ta == A_PACKED ? 0 : g->ta ? k0 * g->lda : k0);
    clg__arg_mem(&a, panels ? panels : g->b);
    clg__arg_u64(&a, panels ? 0 : g->b_off + k0 * g->ldb);
    clg__arg_u32(&a, panels ? p->nr : g->ldb);
    clg__arg_u64(&a, panels ? 0 : g->sb);
    args_c(&a, g);
    clg__arg_u32(&a, k <= PF_C_MAX_K && !folded ? PF_C_TILES * p->nr : 0);
    clg__arg_u32(&a, !panels && !staged ? prefetch_b(p, g, k) : 0);
    clg__arg_mem(&a, epi && epi->bias ? epi->bias : g->c); /* any buffer when unused */
    clg__arg_u64(&a, epi && epi->bias ? epi->bias_off : 0);
    clg__arg_u32(&a, epi ? (epi->bias ? 1u : 0u) | (unsigned)epi->act << 1 : 0u);
    clg__arg_f32(&a, epi ? epi->relu_max : 0.0f);
    clg__arg_u32(&a, folded ? folded->n : 0); /* the batch entries' columns, side by side */
    clg__arg_u64(&a, folded ? folded->sc : 0);
    clg__arg_mem(&a, epi && epi->residual ? epi->residual : g->c); /* any buffer when unused */
    clg__arg_u64(&a, epi && epi->residual ? epi->res_off : 0);
    clg__arg_u32(&a, epi && epi->residual);
    size_t tiles_m = (g->m + p->mr - 1) / p->mr, tiles_n = (g->n + p->nr - 1) / p->nr;
    /* Groups of about local_m * local_n work-items: column tiles fill up a group when there are
     * few row tiles, so that many small problems do not become thousands of tiny groups. When
     * every row tile fits in a group, the group takes them all, so each block of B is read once
     * (m = 64 with 4-row blocks on a Zen 3, paired runs: 64 x 3136 x 1024 55-60 -> 66-85
     * GFLOP/s, 64 x 12544 x 800 51-61 -> 65-74). */
    size_t group = p->local_m * p->local_n;
    size_t lm = clg__local_fit(tiles_m <= group ? group : p->local_m, tiles_m);
    /* Not fitted to tiles_n: padding columns return at once (staging: one column tile). */
    size_t ln = staged ? 1 : group / lm;
    size_t local[3] = {ln, lm, 1};
    size_t global[3] = {tiles_n, tiles_m, panels ? 1 : g->batch};
    st = clg__launch_run(&a, global, local);
    if (st == CLG_OK && epi)
        epi->done = 1;
    return st;
}

/* The leading arguments of the pack kernels: the packed dimension, the chunk of k (kc rows
 * from k0) and the source matrix. */
static void args_pack(clg__launch *a, size_t dim, size_t kc, size_t k0, cl_mem src, size_t off,
                      size_t ld)
{
    clg__arg_u32(a, dim);
    clg__arg_u32(a, kc);
    clg__arg_u32(a, k0);
    clg__arg_mem(a, src);
    clg__arg_u64(a, off);
    clg__arg_u32(a, ld);
}

static clg_status pack_b(clg_ctx *ctx, const clg_gemm_params *p, const char *opts,
                         const clg__gemm_call *g, size_t b_off, size_t k0, size_t kc, cl_mem panels)
{
    clg__launch a;
    const char *name = g->tb ? "clg_gemm_pack_b_cols" : "clg_gemm_pack_b_rows";
    clg_status st = clg__launch_begin(ctx, "gemm", opts, name, &a);
    if (st != CLG_OK)
        return st;
    args_pack(&a, g->n, kc, k0, g->b, b_off, g->ldb);
    clg__arg_mem(&a, panels);
    size_t tiles = (g->n + p->nr - 1) / p->nr;
    size_t panels_local = 64; /* one local size: panels past n return at once */
    size_t local[3] = {g->tb ? p->nr : panels_local, 1, 1};
    size_t global[3] = {g->tb ? p->nr : tiles, g->tb ? tiles : kc, 1};
    return clg__launch_run(&a, global, local);
}

/* Columns [k0, k0+kc) of op(A) packed into MR-row panels; *out is g reading them. */
static clg_status pack_a(clg_ctx *ctx, const clg_gemm_params *p, const char *opts,
                         const clg__gemm_call *g, size_t k0, size_t kc, clg__gemm_call *out)
{
    size_t tiles_m = (g->m + p->mr - 1) / p->mr;
    cl_mem panels;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_GEMM_PACK_A,
                                     tiles_m * p->mr * kc * sizeof(float), &panels);
    clg__launch a;
    if (st == CLG_OK)
        st = clg__launch_begin(ctx, "gemm", opts, "clg_gemm_pack_a", &a);
    if (st != CLG_OK)
        return st;
    args_pack(&a, g->m, kc, k0, g->a, g->a_off, g->lda);
    clg__arg_u32(&a, g->ta);
    clg__arg_mem(&a, panels);
    size_t local[3] = {64, 1, 1}; /* one local size: steps past kc return at once */
    size_t global[3] = {kc, tiles_m, 1};
    *out = *g;
    out->a = panels;
    out->a_off = 0;
    out->lda = kc;
    out->ta = A_PACKED;
    out->sa = 0;
    return clg__launch_run(&a, global, local);
}

/* A packed into panels: the product then reads it as one stream with constant offsets, where
 * in place it keeps MR row pointers, each stepped every k (on Intel's cores the scalar adds
 * compete with the FMAs for ports 0 and 5). Worth its copy where many column tiles reuse A,
 * also across a batch that shares A (the 1x1 convolutions' weights; same VM and runs as the
 * prefetch of B: 1024 -> 512 channels on 14x14 23.4 -> 20.6 ms, 512 -> 256 on 28x28 19.3 ->
 * 17.7). */
static int packs_a(const clg_gemm_params *p, const clg__gemm_call *g)
{
    /* one A for the whole launch: a single entry, or entries that share it (packed once) */
    return (g->batch == 1 || g->sa == 0) && p->pack_a_min_n &&
           g->n * g->batch >= p->pack_a_min_n;
}

/* A product whose C columns run across entries (fold_n): what run_reg's `folded` takes, the
 * entries' columns and C's stride between them; NULL for any other product. */
static const clg__gemm_call *folded_columns(const clg__gemm_call *g, clg__gemm_call *desc)
{
    if (!g->fold_n)
        return NULL;
    *desc = *g;
    desc->n = g->fold_n;
    return desc;
}

/* K in chunks of kc: each chunk's B rows packed into panels, then multiplied; the first chunk
 * applies beta, the later ones accumulate. One batch entry at a time, to bound the panels. */
static clg_status run_packed(clg_ctx *ctx, const clg_gemm_params *p, const char *opts,
                             const clg__gemm_call *g)
{
    size_t kc = g->k < p->kc ? g->k : p->kc;
    size_t tiles_n = (g->n + p->nr - 1) / p->nr;
    cl_mem panels;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_GEMM_PACK, tiles_n * p->nr * kc * sizeof(float), &panels);
    clg__gemm_call one = *g, desc;
    one.batch = 1;
    const clg__gemm_call *folded = folded_columns(g, &desc);
    clg__gemm_epilogue epi = g->epi ? *g->epi : (clg__gemm_epilogue){0};
    for (size_t i = 0; i < g->batch && st == CLG_OK; i++) {
        one.a_off = g->a_off + i * g->sa;
        one.c_off = g->c_off + i * g->sc;
        if (g->epi) { /* entry i's residual, as its C */
            epi.res_off = g->epi->res_off + i * g->sc;
            one.epi = &epi;
        }
        for (size_t k0 = 0; k0 < g->k && st == CLG_OK; k0 += kc) {
            size_t kn = g->k - k0 < kc ? g->k - k0 : kc;
            clg__gemm_call use = one;
            st = pack_b(ctx, p, opts, g, g->b_off + i * g->sb, k0, kn, panels);
            if (st == CLG_OK && packs_a(p, &one))
                st = pack_a(ctx, p, opts, &one, k0, kn, &use);
            if (st == CLG_OK)
                st = run_reg(ctx, p, opts, &use, k0, kn, k0 == 0 ? g->beta : 1.0f, panels, 0,
                             folded);
        }
    }
    if (g->epi)
        g->epi->done = epi.done;
    return st;
}

/* Which way of reading B serves this product (B_PANEL; see run_direct). */
int clg__gemm_b_mode(const clg_gemm_params *p, const clg__gemm_call *g)
{
    /* B in place unless it is transposed, or K is long and rows lie a multiple of 4 KiB apart
     * (then every row of a panel falls in the same cache sets and evicts the others). Against
     * that aliasing, packing copies all of B once more; staging it through local memory does
     * not, and wins when one work-group holds every row tile (each block of B is read once)
     * and K spans at least one whole block (else the barriers cost more than they save).
     * With stage_b 3, rows a multiple of 1 KiB apart alias too where K spans a block: they
     * fall in at most 4 of the 64 positions of L1's 4 KiB set period (on an Intel Xeon, in
     * paired runs, 64 x 12544 x 800 staged 1.6-2.1x and 512^3 packed 1.2-1.4x against in
     * place; AMD's rows keep 2, measured without it). */
    if (g->tb == CLG_NO_TRANS && g->n >= p->nr) {
        size_t row_bytes = g->ldb * sizeof(float);
        int aliasing = row_bytes % 4096 == 0 ||
                       (p->stage_b == 3 && row_bytes % 1024 == 0 && g->k >= p->kc);
        size_t tiles_m = (g->m + p->mr - 1) / p->mr;
        if (p->stage_b == 1 || (p->stage_b >= 2 && aliasing && g->k >= p->kc && tiles_m <= p->local_m))
            return CLG__GEMM_B_STAGED;
        if (g->k < p->pack_min_k || !aliasing)
            return CLG__GEMM_B_IN_PLACE;
    }
    return CLG__GEMM_B_PACKED;
}

static clg_status run_direct(clg_ctx *ctx, const clg_gemm_params *p, const clg__gemm_call *g)
{
    char opts[128];
    double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    int small = g->k == 0 || (flops <= p->small_flops && !g->fold_n); /* it does not fold */
    int mode = small || p->kernel == CLG_GEMM_KERNEL_LOCAL ? CLG__GEMM_B_IN_PLACE
                                                           : clg__gemm_b_mode(p, g);
    if (g->fold_n) /* B side by side: each row runs across every entry, a page or more long
                    * (run_packed, then, serves every such product) */
        mode = CLG__GEMM_B_PACKED;
    program_options(p, mode, opts, sizeof opts); /* only the program this product uses */
    if (small)
        return run_small(ctx, opts, g);
    if (p->kernel == CLG_GEMM_KERNEL_LOCAL)
        return run_tile(ctx, p, g);
    if (mode == CLG__GEMM_B_PACKED)
        return run_packed(ctx, p, opts, g);
    clg__gemm_call use = *g;
    clg_status st = packs_a(p, g) ? pack_a(ctx, p, opts, g, 0, g->k, &use) : CLG_OK;
    if (st != CLG_OK)
        return st;
    return run_reg(ctx, p, opts, &use, 0, g->k, g->beta, NULL, mode == CLG__GEMM_B_STAGED, NULL);
}

static clg_status reduce(clg_ctx *ctx, const char *opts, cl_mem parts, size_t slices, size_t m,
                         size_t n, float beta, cl_mem c, size_t c_off, size_t ldc)
{
    clg__launch a;
    clg_status st = clg__launch_begin(ctx, "gemm", opts, "clg_gemm_reduce", &a);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&a, parts);
    clg__arg_u32(&a, slices);
    clg__arg_u32(&a, m);
    clg__arg_u32(&a, n);
    clg__arg_f32(&a, beta);
    clg__arg_mem(&a, c);
    clg__arg_u64(&a, c_off);
    clg__arg_u32(&a, ldc);
    size_t local[3] = {SMALL_LX, SMALL_LY, 1};
    size_t global[3] = {n, m, 1};
    return clg__launch_run(&a, global, local);
}

clg_status clg__gemm_reduce_slices(clg_ctx *ctx, cl_mem parts, size_t slices, size_t m, size_t n,
                                   float beta, cl_mem c, size_t c_off, size_t ldc)
{
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    char opts[128];
    if (st != CLG_OK)
        return st;
    /* the small kernel's program */
    program_options(&s->params, CLG__GEMM_B_IN_PLACE, opts, sizeof opts);
    return reduce(ctx, opts, parts, slices, m, n, beta, c, c_off, ldc);
}

/* k cut into slices, each product written densely (m x n) into scratch, then summed. */
static clg_status run_split(clg_ctx *ctx, const clg_gemm_params *p, const char *opts,
                            const clg__gemm_call *g, size_t slices)
{
    cl_mem parts;
    size_t part = g->m * g->n;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_GEMM_SPLIT, slices * part * sizeof(float), &parts);
    size_t step = (g->k + slices - 1) / slices;
    for (size_t s = 0; s < slices && st == CLG_OK; s++) {
        clg__gemm_call one = *g;
        one.epi = NULL; /* the slices' sum is written by the reduction */
        size_t k0 = s * step;
        one.k = g->k - k0 < step ? g->k - k0 : step;
        one.a_off = g->a_off + (g->ta ? k0 * g->lda : k0);
        one.b_off = g->b_off + (g->tb ? k0 : k0 * g->ldb);
        one.beta = 0.0f;
        one.c = parts;
        one.c_off = s * part;
        one.ldc = g->n;
        st = run_direct(ctx, p, &one);
    }
    return st == CLG_OK ? reduce(ctx, opts, parts, slices, g->m, g->n, g->beta, g->c, g->c_off, g->ldc)
                        : st;
}

/* The width of thin products' blocks (thin_nr, at most the row's nr). */
static unsigned thin_width(const clg_gemm_params *p)
{
    return p->thin_nr < p->nr ? p->thin_nr : p->nr;
}

/* The block width of the product side by side: the thin width where every block then has
 * columns of at most two entries (the store splits a block once). */
static unsigned fold_width(const clg_gemm_params *p, const clg__gemm_call *g)
{
    return g->n >= thin_width(p) ? thin_width(p) : 16;
}

/* A batched product with A shared and few columns an entry (a 1x1 convolution on 7x7 planes:
 * 49 columns, 4 blocks of 16 with a quarter of their lanes idle) as one product whose columns
 * run across the entries: B packed into panels that cross from one entry into the next, C
 * stored back entry by entry (clg_gemm_reg's fold_n), in 16-wide blocks. Where the packing
 * costs less than the idle lanes did: at least as many rows as the sum is long (Zen 4, batch
 * 32, 7x7 planes: 320 -> 1280 channels 8.1-8.6 -> 6.9-7.6 ms, 160 -> 960 3.5 -> 2.9; 960 -> 160
 * 2.9-3.0 against 3.2-4.7 folded, so not folded). */
static int folds(const clg_gemm_params *p, const clg__gemm_call *g)
{
    size_t w = fold_width(p, g), blocks = (g->n + w - 1) / w * w;
    return p->kernel == CLG_GEMM_KERNEL_REG && g->batch > 1 && g->sa == 0 &&
           g->tb == CLG_NO_TRANS && g->n >= 16 && 100 * blocks > 110 * g->n && g->m >= g->k &&
           g->n * g->batch < (1u << 31) && 2.0 * (double)g->m * g->n * g->k > p->small_flops;
}

static clg_status pack_b_fold(clg_ctx *ctx, const clg_gemm_params *p, const char *opts,
                              const clg__gemm_call *g, const clg__gemm_call *f, size_t k0,
                              size_t kc, cl_mem panels)
{
    clg__launch a;
    clg_status st = clg__launch_begin(ctx, "gemm", opts, "clg_gemm_pack_b_fold", &a);
    if (st != CLG_OK)
        return st;
    args_pack(&a, f->n, kc, k0, g->b, g->b_off, g->ldb);
    clg__arg_mem(&a, panels);
    clg__arg_u32(&a, g->n);
    clg__arg_u64(&a, g->sb);
    size_t local[3] = {64, 1, 1}; /* one local size: panels past n return at once */
    size_t global[3] = {(f->n + p->nr - 1) / p->nr, kc, 1};
    return clg__launch_run(&a, global, local);
}

static clg_status run_folded(clg_ctx *ctx, const clg_gemm_params *wide, const clg__gemm_call *g)
{
    clg_gemm_params p = *wide;
    p.nr = fold_width(wide, g);
    char opts[128];
    program_options(&p, CLG__GEMM_B_PACKED, opts, sizeof opts);
    clg__gemm_call f = *g;
    f.n = g->n * g->batch;
    f.batch = 1;
    /* all of k in one pass, so that C is written once */
    size_t tiles_n = (f.n + p.nr - 1) / p.nr;
    cl_mem panels;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_GEMM_PACK, tiles_n * p.nr * g->k * sizeof(float), &panels);
    if (st == CLG_OK)
        st = pack_b_fold(ctx, &p, opts, g, &f, 0, g->k, panels);
    return st == CLG_OK ? run_reg(ctx, &p, opts, &f, 0, g->k, g->beta, panels, 0, g) : st;
}

/* 16-wide register blocks (the row's mr kept) in place of wider ones for:
 * - products at most 16 columns wide (a fully connected layer's forward on a small shard,
 *   where y^T = w . x^T), which waste half or more of wider blocks (the default network's
 *   3136 -> 1024 layer with 16 samples on one core: 1.1 ms instead of 2.3);
 * and, where the row's thin_nr is 16 (one FMA port: 8 x 16's accumulators keep it busy):
 * - wider products whose last block would be mostly padding (a 1x1 convolution on 14x14
 *   planes: 196 columns, 7 blocks of 32 against 13 of 16);
 * - batched products of at most NARROW_MAX_M rows (the 1x1 convolutions' forward passes,
 *   image by image, into few channels), whose B rows each feed few products.
 * Zen 4, one-layer networks at batch 32, 8 x 32 (or 12 x 16 on 14x14) -> 8 x 16, ms:
 * 384 -> 64 channels on 14x14 3.3 -> 1.9, 1024 -> 256 on 14x14 28.5 -> 19.0, 144 -> 24 on
 * 56x56 6.0 -> 4.2, 576 -> 96 on 14x14 4.4 -> 3.7, 16 -> 96 on 112x112 12.8 -> 11.1; 64 -> 256
 * on 56x56 (256 rows) keeps 8 x 32: 19.5-20.7 against 22.5-23.0 with 8 x 16. */
enum { NARROW_MAX_M = 128 };
static int narrow_for(const clg_gemm_params *p, const clg__gemm_call *g, clg_gemm_params *out)
{
    if (p->kernel != CLG_GEMM_KERNEL_REG || p->nr <= 16)
        return 0;
    size_t wide = (g->n + p->nr - 1) / p->nr * p->nr, thin = (g->n + 15) / 16 * 16;
    int few_rows = g->batch > 1 && g->m <= NARROW_MAX_M;
    if (g->n > 16 && (thin_width(p) > 16 || (100 * thin > 95 * wide && !few_rows)))
        return 0;
    *out = *p;
    out->nr = 16;
    return 1;
}

clg_status clg__gemm_builtin(clg_ctx *ctx, const clg_gemm_params *p, const clg__gemm_call *g)
{
    if (g->fold_n) { /* blocks of at most two entries' columns, as run_folded's */
        clg__gemm_call desc;
        clg_gemm_params q = *p;
        q.nr = fold_width(p, folded_columns(g, &desc));
        return run_direct(ctx, &q, g);
    }
    if (folds(p, g))
        return run_folded(ctx, p, g);
    clg_gemm_params narrow;
    if (narrow_for(p, g, &narrow))
        p = &narrow;
    size_t tiles = ((g->m + p->mr - 1) / p->mr) * ((g->n + p->nr - 1) / p->nr);
    if (p->kernel == CLG_GEMM_KERNEL_REG && g->batch == 1 && tiles < SPLIT_MAX_TILES &&
        g->k >= SPLIT_MIN_K && 2.0 * (double)g->m * g->n * g->k > p->small_flops) {
        char opts[128];
        program_options(p, CLG__GEMM_B_IN_PLACE, opts, sizeof opts);
        return run_split(ctx, p, opts, g, SPLIT_SLICES);
    }
    return run_direct(ctx, p, g);
}

clg_status clg__gemm_warm_up(clg_ctx *ctx)
{
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    char opts[192];
    cl_program prog;
    int modes = s && s->params.kernel == CLG_GEMM_KERNEL_REG ? 3 : 1;
    for (int mode = 0; st == CLG_OK && mode < modes; mode++) {
        program_options(&s->params, mode, opts, sizeof opts);
        st = clg__program_get(ctx, "gemm", opts, &prog);
    }
    /* GPUs: the tile programs of the transposes a network multiplies (NN, NT, TN) */
    for (int t = 0; st == CLG_OK && s->params.kernel == CLG_GEMM_KERNEL_LOCAL && t < 3; t++)
        st = clg__gemm_tile_build(ctx, &s->params, t == 2, t == 1, 0);
    clg_gemm_params narrow;
    clg__gemm_call thin = {.n = 1};
    /* B in place (see clg__gemm_b_mode) and packed (run_folded's) */
    if (st == CLG_OK && narrow_for(&s->params, &thin, &narrow)) {
        program_options(&narrow, CLG__GEMM_B_IN_PLACE, opts, sizeof opts);
        st = clg__program_get(ctx, "gemm", opts, &prog);
        program_options(&narrow, CLG__GEMM_B_PACKED, opts, sizeof opts);
        if (st == CLG_OK)
            st = clg__program_get(ctx, "gemm", opts, &prog);
    }
    return st;
}
