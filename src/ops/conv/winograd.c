/* Winograd convolution (cl_kernels/winograd.cl): F(4x4, 3x3) and F(2x2, 5x5) for stride-1,
 * dilation-1 layers, forward and backward-data (the forward of dy, padded R-1-p, with the
 * rotated, transposed filters). The input goes channels-last into a padded buffer, is
 * transformed tile by tile, and one kernel does the products, the output transform and the
 * epilogue, so neither the products nor the column matrix ever reach memory. The weight
 * gradient is F(3x3, 4x4) or F(5x5, 2x2) at the same points: the same input transform, dy's
 * tiles transformed, one product per transform point summed over every tile, then dW. */
#include <stdint.h>
#include <stdio.h>
#include "ops/conv/winograd_internal.h"

enum { LANES = 16 };

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

size_t clg__wino_tile(size_t r)
{
    return r == 3 ? 4 : 2;
}

size_t clg__wino_points(const clg__conv_geom *g)
{
    size_t a = clg__wino_tile(g->R) + g->R - 1;
    return a * a;
}

void clg__wino_args_output(clg__launch *l, const clg__conv_geom *g, const clg__wino_problem *w,
                           clg_tensor *y, size_t n0, size_t gi, cl_mem any)
{
    size_t plane = w->P * w->Q, img = w->outs_total * plane;
    clg__arg_u32(l, w->th);
    clg__arg_u32(l, w->tw);
    clg__arg_u32(l, w->P);
    clg__arg_u32(l, w->Q);
    clg__arg_mem(l, y->mem);
    clg__arg_u64(l, y->offset + n0 * img + gi * w->outs * plane);
    clg__arg_u64(l, img);
    clg__arg_u64(l, plane);
    clg__arg_mem(l, g->bias ? g->bias->mem : any);
    clg__arg_u64(l, g->bias ? g->bias->offset + gi * w->outs : 0);
    clg__arg_u32(l, (g->bias ? 1u : 0u) | (unsigned)g->act << 1);
    clg__arg_f32(l, g->relu_max);
}

clg__wino_problem clg__wino_problem_of(const clg__conv_geom *g, clg_conv_pass pass, unsigned nr)
{
    clg__wino_problem w;
    w.flip = pass == CLG_CONV_BWD_DATA;
    if (w.flip) {
        w.ins_total = g->K, w.ins = g->Kg, w.outs_total = g->C, w.outs = g->Cg;
        w.Hin = g->P, w.Win = g->Q, w.P = g->H, w.Q = g->W;
        w.top = (long)g->R - 1 - (long)g->pt, w.left = (long)g->S - 1 - (long)g->pl;
    } else {
        w.ins_total = g->C, w.ins = g->Cg, w.outs_total = g->K, w.outs = g->Kg;
        w.Hin = g->H, w.Win = g->W, w.P = g->P, w.Q = g->Q;
        w.top = (long)g->pt, w.left = (long)g->pl;
    }
    w.m = clg__wino_tile(g->R);
    w.th = (w.P + w.m - 1) / w.m, w.tw = (w.Q + w.m - 1) / w.m;
    w.Hq = w.th * w.m + g->R - 1, w.Wq = w.tw * w.m + g->S - 1;
    w.ldc = round_up(w.ins_total, LANES);
    w.ldv = round_up(w.ins, LANES);
    w.ldk = round_up(w.outs, nr);
    return w;
}

int clg__conv_winograd_applies(const clg__conv_geom *g)
{
    return g->R == g->S && (g->R == 3 || g->R == 5) && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
           g->dw == 1;
}

/* The products' register tile: the GEMM's MR rows by 32 output channels where the pass has
 * that many (rounding them up to 32 costs at most an eighth more), else by 16, which halves
 * the private block of products each work-item keeps for its output transform (36 x MR x 16
 * floats) and pads channel counts to 16, not 32. 8 x 16 blocks leave 8 accumulators, too few
 * to cover two FMA ports' latency (Xeon VM family 6 model 207, batch 32, products of 256
 * channels on 14x14 and 512 on 7x7: 12.3-13.1 -> 9.4-9.8 and 15.4-16.3 -> 11.3-11.7 ms a
 * layer). The weight gradient's products keep 16 (their WG_MR x NR block of accumulators
 * would fill every register at 32). */
static unsigned wino_nr(const clg__conv_geom *g, clg_conv_pass pass)
{
    size_t outs = pass == CLG_CONV_BWD_DATA ? g->Cg : g->Kg;
    if (pass == CLG_CONV_BWD_WEIGHTS || round_up(outs, 32) * 8 > round_up(outs, LANES) * 9)
        return LANES;
    return 32;
}

static clg_status wino_tiles(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                             unsigned *mr, unsigned *nr)
{
    clg_status st = clg__conv_tiles(ctx, mr, nr);
    *nr = wino_nr(g, pass);
    return st;
}

/* The weight gradient's products: output channels a work-item (a multiple of LANES, which E's
 * rows are padded to). 16 reads each row of E and V once for 16-channel layers; 8 read them
 * twice and was 5% slower in ResNet-20's step. */
#define WGEMM_MR 16u

clg_status clg__conv_winograd_options(clg_ctx *ctx, size_t r, unsigned nr, char *out,
                                      size_t size)
{
    unsigned mr, conv_nr;
    clg_status st = clg__conv_tiles(ctx, &mr, &conv_nr);
    if (st == CLG_OK)
        snprintf(out, size, "-DMR=%u -DNR=%u -DWG_MR=%u -DWM=%zu -DWR=%zu", mr, nr, WGEMM_MR,
                 clg__wino_tile(r), r);
    return st;
}

/* The forward pass's V kept for the weight gradient (one group only). */
static int keeps(const clg__conv_geom *g)
{
    return g->keep && g->G == 1;
}

/* Whether a pass runs clg_wino_fused (no V in memory): F(4x4, 3x3), at most one vector of
 * channels in and out. A forward pass with a keep then keeps its padded copy of x, not V
 * (a fused pass that stored V gained nothing: the stores remain), and the weight gradient
 * transforms that copy again: V is 2.25x x's size, and reading it back from memory cost
 * more than the transform (ResNet-20's 16-channel layers; Xeon VM family 6 model 207, batch
 * 64, 5 alternating rounds of clgrad-bench train: 1,021-1,059 -> 1,057-1,076 images/s). */
static int fuses(const clg__conv_geom *g, clg_conv_pass pass, const clg__wino_problem *w)
{
    return pass != CLG_CONV_BWD_WEIGHTS && clg__wino_tile(g->R) == 4 && w->ins <= LANES &&
           w->outs <= LANES;
}

/* Weight gradient: floats of one image's dy, channels-last on the tiles' grid. */
static size_t dy_grid(const clg__wino_problem *w)
{
    return w->th * w->m * w->tw * w->m * round_up(w->outs_total, LANES);
}

void clg__conv_winograd_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                              size_t *fixed, size_t *per_image)
{
    unsigned mr = 8, nr = 32;
    clg__conv_tiles_or_default(ctx, &mr, &nr);
    nr = wino_nr(g, pass); /* as wino_tiles */
    int wgrad = pass == CLG_CONV_BWD_WEIGHTS;
    clg__wino_problem w = clg__wino_problem_of(g, wgrad ? CLG_CONV_FWD : pass, nr);
    size_t a2 = clg__wino_points(g), tiles = w.th * w.tw;
    /* U (forward) or dU (weight gradient), and the slack after the buffers that vector reads
     * of the last rows run into */
    *fixed = ((wgrad ? g->G * a2 * g->Kg * g->Cg : g->G * a2 * w.ins * w.ldk) + nr + mr + LANES) *
             sizeof(float);
    *per_image = (w.Hq * w.Wq * w.ldc + (fuses(g, pass, &w) ? 0 : a2 * tiles * w.ldv)) *
                 sizeof(float);
    if (wgrad) { /* dy on the grid (sharing the padded input's buffer) and E */
        size_t grid = dy_grid(&w), xq = w.Hq * w.Wq * w.ldc;
        size_t extra = (grid > xq ? grid - xq : 0) + a2 * tiles * round_up(w.outs, LANES);
        *per_image += extra * sizeof(float);
    }
}

static clg_status filter_transform(clg_ctx *ctx, const char *opts, const clg__conv_geom *g,
                                   const clg__wino_problem *w, const clg_tensor *wt, size_t gi,
                                   cl_mem U, size_t u_off)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts,
                                      w->flip ? "clg_wino_filter_flip" : "clg_wino_filter", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, wt->mem);
    clg__arg_u64(&l, wt->offset + gi * g->Kg * g->Cg * g->R * g->S);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->Cg);
    clg__arg_u32(&l, w->ldk);
    clg__arg_mem(&l, U);
    clg__arg_u64(&l, u_off);
    size_t global[3] = {w->ldk, w->ins, 1}, local[3] = {LANES, 1, 1}; /* LANES: see the kernel */
    return clg__launch_run(&l, global, local);
}

/* Channels-last padded copy: xq[n][hq][wq][c] of images [n0, n0+nb) of a tensor of `channels`
 * planes of H x W placed at (top, left) in an Hq x Wq grid, rows of ldc. */
typedef struct grid_copy {
    size_t channels, H, W, Hq, Wq, ldc;
    long top, left;
} grid_copy;

static clg_status pad(clg_ctx *ctx, const char *opts, const grid_copy *c, const clg_tensor *x,
                      size_t n0, size_t nb, cl_mem xq, size_t xq_off)
{
    /* clg_wino_pad16 on CPUs for rows of 8 or more (with one-at-a-time loads for narrower
     * rows it lost to the GPU form: ResNet-20's 7x7 stage, 15 copies, 3 ms a step against
     * 1.3-1.8) */
    int rows16 = c->W >= 8;
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts,
                                      rows16 ? "clg_wino_pad16" : "clg_wino_pad", &l);
    if (st != CLG_OK)
        return st;
    size_t img = c->channels * c->H * c->W;
    clg__arg_mem(&l, x->mem);
    clg__arg_u64(&l, x->offset + n0 * img);
    clg__arg_u64(&l, img);
    clg__arg_u32(&l, c->channels);
    clg__arg_u32(&l, c->H);
    clg__arg_u32(&l, c->W);
    clg__arg_u32(&l, (uint32_t)(int32_t)c->top); /* the kernel reads them as int */
    clg__arg_u32(&l, (uint32_t)(int32_t)c->left);
    clg__arg_u32(&l, c->Hq);
    clg__arg_u32(&l, c->Wq);
    clg__arg_u32(&l, c->ldc);
    clg__arg_mem(&l, xq);
    clg__arg_u64(&l, xq_off);
    clg__arg_u64(&l, c->Hq * c->Wq * c->ldc);
    if (rows16) {
        size_t global[3] = {(c->W + LANES - 1) / LANES, 1, nb * c->ldc / LANES};
        size_t local[3] = {1, 1, 1};
        return clg__launch_run(&l, global, local);
    }
    size_t global[3] = {c->Wq, c->Hq, nb}, local[3] = {LANES, 1, 1};
    return clg__launch_run(&l, global, local);
}

static grid_copy input_grid(const clg__wino_problem *w)
{
    grid_copy c = {w->ins_total, w->Hin, w->Win, w->Hq, w->Wq, w->ldc, w->top, w->left};
    return c;
}

/* dy on the tiles' grid (th*m x tw*m, zero past P x Q), for the weight gradient. */
static grid_copy dy_grid_copy(const clg__wino_problem *w)
{
    grid_copy c = {w->outs_total, w->P, w->Q, w->th * w->m, w->tw * w->m,
                   round_up(w->outs_total, LANES), 0, 0};
    return c;
}

/* The rows of V (or E) a chunk's products read: vt tiles per transform point, the chunk's
 * first at off (floats). A chunk's own scratch: vt = T, off 0. */
typedef struct rows {
    cl_mem mem;
    size_t vt, off;
} rows;

/* The channels-last copy's arguments of the kernels that read it: the buffer, its offset, an
 * image's floats, the row length and the channel stride. */
static void grid_args(clg__launch *l, const grid_copy *c, cl_mem xq, size_t xq_off)
{
    clg__arg_mem(l, xq);
    clg__arg_u64(l, xq_off);
    clg__arg_u64(l, c->Hq * c->Wq * c->ldc);
    clg__arg_u32(l, c->Wq);
    clg__arg_u32(l, c->ldc);
}

/* V (kernel clg_wino_input, the input patches) or E (clg_wino_dy, dy's tiles) of a group's
 * channels [c_first, +channels) of the channels-last copy `c`, rows of ld. */
static clg_status transform(clg_ctx *ctx, const char *opts, const char *kernel, const grid_copy *c,
                            const clg__wino_problem *w, cl_mem xq, size_t xq_off, size_t c_first,
                            size_t channels, size_t T, rows out, size_t ld)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts, kernel, &l);
    if (st != CLG_OK)
        return st;
    grid_args(&l, c, xq, xq_off);
    clg__arg_u32(&l, c_first);
    clg__arg_u32(&l, w->th);
    clg__arg_u32(&l, w->tw);
    clg__arg_u32(&l, T);
    clg__arg_u32(&l, ld);
    clg__arg_mem(&l, out.mem);
    clg__arg_u32(&l, out.vt);
    clg__arg_u64(&l, out.off);
    /* the grid rounds up to the groups: items past the blocks return (they wrote the next
     * row's first channels, racing its own item: 48 channels ran 3 blocks in groups of 4) */
    size_t blocks = (channels + LANES - 1) / LANES;
    clg__arg_u32(&l, blocks);
    size_t global[3] = {blocks, T, 1}, local[3] = {clg__local_pow2(blocks, 64), 8, 1};
    return clg__launch_run(&l, global, local);
}

/* The products' last arguments, in clg_wino_gemm and clg_wino_fused: U, its row length, the
 * output channels and the output's (clg__wino_args_output). */
static void products_args(clg__launch *l, const clg__conv_geom *g, const clg__wino_problem *w,
                          cl_mem U, size_t u_off, clg_tensor *y, size_t n0, size_t gi)
{
    clg__arg_mem(l, U);
    clg__arg_u64(l, u_off);
    clg__arg_u32(l, w->ldk);
    clg__arg_u32(l, w->outs);
    clg__wino_args_output(l, g, w, y, n0, gi, U);
}

static clg_status products(clg_ctx *ctx, const char *opts, unsigned mr, unsigned nr,
                           const clg__conv_geom *g, const clg__wino_problem *w, rows V, size_t T,
                           cl_mem U, size_t u_off, clg_tensor *y, size_t n0, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts, "clg_wino_gemm", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, V.mem);
    clg__arg_u32(&l, V.vt);
    clg__arg_u64(&l, V.off);
    clg__arg_u32(&l, w->ldv);
    clg__arg_u32(&l, T);
    clg__arg_u32(&l, w->ins);
    products_args(&l, g, w, U, u_off, y, n0, gi);
    size_t tiles_n = w->ldk / nr, tiles_m = (T + mr - 1) / mr;
    size_t global[3] = {tiles_n, tiles_m, 1};
    /* a work-group's items share one slice of U (its 36 points' rows), one after another */
    size_t local[3] = {1, clg__local_pow2(tiles_m, 8), 1};
    return clg__launch_run(&l, global, local);
}

static clg_status fused(clg_ctx *ctx, const char *opts, unsigned mr, const clg__conv_geom *g,
                        const clg__wino_problem *w, const grid_copy *c, cl_mem xq, size_t xq_off,
                        size_t T, cl_mem U, size_t u_off, clg_tensor *y, size_t n0, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts, "clg_wino_fused", &l);
    if (st != CLG_OK)
        return st;
    grid_args(&l, c, xq, xq_off);
    clg__arg_u32(&l, gi * w->ins);
    clg__arg_u32(&l, T);
    clg__arg_u32(&l, w->ins);
    products_args(&l, g, w, U, u_off, y, n0, gi);
    size_t tiles_m = (T + mr - 1) / mr;
    size_t global[3] = {1, tiles_m, 1}, local[3] = {1, clg__local_pow2(tiles_m, 4), 1};
    return clg__launch_run(&l, global, local);
}

static clg_status wgemm(clg_ctx *ctx, const char *opts, unsigned nr,
                        const clg__conv_geom *g, cl_mem E, size_t lde, rows V, size_t ldv,
                        size_t T, cl_mem dU, size_t du_off, int accumulate)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts, "clg_wino_wgemm", &l);
    if (st != CLG_OK)
        return st;
    size_t a2 = clg__wino_points(g);
    clg__arg_mem(&l, E);
    clg__arg_u32(&l, lde);
    clg__arg_mem(&l, V.mem);
    clg__arg_u32(&l, V.vt);
    clg__arg_u64(&l, V.off);
    clg__arg_u32(&l, ldv);
    clg__arg_u32(&l, T);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->Cg);
    clg__arg_mem(&l, dU);
    clg__arg_u64(&l, du_off);
    clg__arg_u32(&l, (size_t)accumulate);
    size_t tiles_n = (g->Cg + nr - 1) / nr, tiles_m = (g->Kg + WGEMM_MR - 1) / WGEMM_MR;
    size_t global[3] = {tiles_n, tiles_m, a2}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

static clg_status wout(clg_ctx *ctx, const char *opts, const clg__conv_geom *g, cl_mem dU,
                       size_t du_off, clg_tensor *dw, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", opts, "clg_wino_wout", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_mem(&l, dU);
    clg__arg_u64(&l, du_off);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->Cg);
    clg__arg_mem(&l, dw->mem);
    clg__arg_u64(&l, dw->offset + gi * g->Kg * g->Cg * g->R * g->S);
    size_t global[3] = {(g->Cg + LANES - 1) / LANES, g->Kg, 1}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}


/* The layer's keep grown to `floats` (every image's tiles or padded copies, with the slack
 * that vector reads past the last row run into). */
static clg_status keep_reserve(clg_ctx *ctx, const clg__conv_geom *g, size_t floats)
{
    clg__conv_keep *k = g->keep;
    if (k->v && clg_tensor_numel(k->v) >= floats)
        return CLG_OK;
    clg_tensor_destroy(k->v);
    k->v = NULL;
    return clg_tensor_create(ctx, (clg_shape){1, floats, 1, 1}, &k->v);
}

static rows kept_rows(const clg__conv_geom *g, size_t T_all, size_t first_tile, size_t ldv)
{
    rows r = {g->keep->v->mem, T_all, g->keep->v->offset + first_tile * ldv};
    return r;
}

/* dy on the data gradient's padded grid (input_grid of its problem bd) also serves the weight
 * gradient's tiles (problem fw) when dy lies inside it from (top, left) >= 0 and the grid
 * holds those tiles past it: then a layer copies dy once for both passes, into
 * CLG__SCRATCH_CONV_DYQ (ResNet-20: 77 -> 55 copies a step, 12.0 -> 9.3 ms). */
static int dy_shared(const clg__conv_geom *g, const clg__wino_problem *fw,
                     const clg__wino_problem *bd)
{
    return keeps(g) && bd->top >= 0 && bd->left >= 0 &&
           bd->Hq >= (size_t)bd->top + fw->th * fw->m &&
           bd->Wq >= (size_t)bd->left + fw->tw * fw->m;
}

/* Weight gradient: per chunk of images and group, V of x's patches (or the forward pass's,
 * kept) and E of dy's tiles (one channels-last buffer holds x, then dy; or dy goes to the
 * copy shared with the data gradient), the products summed into dU chunk after chunk; then
 * dW per group. */
static clg_status weights(clg_ctx *ctx, const char *opts, unsigned mr, unsigned nr,
                          const clg__conv_geom *g, const clg_tensor *x, const clg_tensor *dy,
                          clg_tensor *dw)
{
    clg__wino_problem w = clg__wino_problem_of(g, CLG_CONV_FWD, nr);
    size_t a2 = clg__wino_points(g), tiles = w.th * w.tw;
    size_t fixed, per_image, du_group = a2 * g->Kg * g->Cg, lde = round_up(g->Kg, LANES);
    clg__conv_winograd_bytes(ctx, g, CLG_CONV_BWD_WEIGHTS, &fixed, &per_image);
    size_t nb = clg__conv_chunk_after(g, fixed, per_image);
    clg__wino_problem bd = clg__wino_problem_of(g, CLG_CONV_BWD_DATA, nr);
    int share = dy_shared(g, &w, &bd);
    grid_copy in = input_grid(&w), out = share ? input_grid(&bd) : dy_grid_copy(&w);
    size_t xq_img = in.Hq * in.Wq * in.ldc, dq_img = out.Hq * out.Wq * out.ldc;
    size_t q_img = (xq_img > dq_img || share) ? xq_img : dq_img; /* x's, and dy's unshared */
    /* where dy's first pixel lies on the grid */
    size_t dy_first = share ? ((size_t)bd.top * out.Wq + (size_t)bd.left) * out.ldc : 0;
    int kept_any = keeps(g) && g->keep->v && g->keep->n == g->N;
    int kept = kept_any && !g->keep->grid, kept_grid = kept_any && g->keep->grid;
    cl_mem xq, V = NULL, E, dU;
    clg_status st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW, (nb * q_img + LANES) * sizeof(float), &xq);
    if (st == CLG_OK && !kept)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, (nb * a2 * tiles * w.ldv + nr) * sizeof(float), &V);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, (nb * a2 * tiles * lde + mr) * sizeof(float), &E);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_WINO, g->G * du_group * sizeof(float), &dU);
    cl_mem dq = xq; /* dy's copy: shared, the whole batch's; else each chunk's */
    if (st == CLG_OK && share)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_DYQ, (g->N * dq_img + LANES) * sizeof(float),
                              &dq);
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t dq_off = share ? n0 * dq_img : 0;
        size_t cnt = g->N - n0 < nb ? g->N - n0 : nb, T = cnt * tiles;
        rows v = kept ? kept_rows(g, g->N * tiles, n0 * tiles, w.ldv) : (rows){V, T, 0};
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            if (!kept) { /* x's copy: the forward pass's, or made here */
                cl_mem from = kept_grid ? g->keep->v->mem : xq;
                size_t from_off = kept_grid ? g->keep->v->offset + n0 * xq_img : 0;
                if (!kept_grid)
                    st = pad(ctx, opts, &in, x, n0, cnt, xq, 0);
                if (st == CLG_OK)
                    st = transform(ctx, opts, "clg_wino_input", &in, &w, from, from_off,
                                   gi * g->Cg, g->Cg, T, v, w.ldv);
            }
            if (st == CLG_OK)
                st = pad(ctx, opts, &out, dy, n0, cnt, dq, dq_off);
            if (st == CLG_OK)
                st = transform(ctx, opts, "clg_wino_dy", &out, &w, dq, dq_off + dy_first,
                               gi * g->Kg, g->Kg, T, (rows){E, T, 0}, lde);
            if (st == CLG_OK)
                st = wgemm(ctx, opts, nr, g, E, lde, v, w.ldv, T, dU, gi * du_group, n0 > 0);
        }
    }
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++)
        st = wout(ctx, opts, g, dU, gi * du_group, dw, gi);
    if (st == CLG_OK && share)
        g->keep->dyq_n = g->N;
    return st;
}

clg_status clg__conv_winograd_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    if (!clg__conv_winograd_applies(g))
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "conv2d: winograd does not apply to this layer");
    unsigned mr, nr;
    char opts[64];
    clg_status st = wino_tiles(ctx, g, pass, &mr, &nr);
    if (st == CLG_OK)
        st = clg__conv_winograd_options(ctx, g->R, nr, opts, sizeof opts);
    if (st != CLG_OK)
        return st;
    if (pass == CLG_CONV_BWD_WEIGHTS)
        return weights(ctx, opts, mr, nr, g, a, b, out);
    clg__wino_problem w = clg__wino_problem_of(g, pass, nr);
    size_t a2 = clg__wino_points(g), u_group = a2 * w.ins * w.ldk, tiles = w.th * w.tw;
    size_t fixed, per_image;
    clg__conv_winograd_bytes(ctx, g, pass, &fixed, &per_image);
    size_t nb = clg__conv_chunk_after(g, fixed, per_image);
    size_t xq_img = w.Hq * w.Wq * w.ldc, v_img = a2 * tiles * w.ldv;
    int fusing = fuses(g, pass, &w);
    /* V straight into the layer's keep, or (fused) the padded copy of x */
    int keeping = pass == CLG_CONV_FWD && keeps(g) && !fusing;
    int keeping_grid = pass == CLG_CONV_FWD && keeps(g) && fusing;
    /* the data gradient reads the copy of dy that the weight gradient before it left in
     * CLG__SCRATCH_CONV_DYQ (asked for at the same size: the same buffer) */
    clg__wino_problem fw = clg__wino_problem_of(g, CLG_CONV_FWD, nr);
    int shared = pass == CLG_CONV_BWD_DATA && dy_shared(g, &fw, &w) && g->keep->dyq_n == g->N;
    cl_mem U, V = NULL, xq = NULL;
    st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_AUX, g->G * u_group * sizeof(float), &U);
    size_t xq_base = 0; /* where image 0's copy starts in xq (the whole batch's copies) */
    if (st == CLG_OK && keeping_grid) {
        st = keep_reserve(ctx, g, g->N * xq_img + LANES);
        if (st == CLG_OK)
            xq = g->keep->v->mem, xq_base = g->keep->v->offset;
    } else if (st == CLG_OK) {
        st = shared ? clg__scratch_get(ctx, CLG__SCRATCH_CONV_DYQ,
                                       (g->N * xq_img + LANES) * sizeof(float), &xq)
                    : clg__scratch_get(ctx, CLG__SCRATCH_CONV_DW,
                                       (nb * xq_img + LANES) * sizeof(float), &xq);
    }
    if (st == CLG_OK && !keeping && !fusing)
        st = clg__scratch_get(ctx, CLG__SCRATCH_CONV_COLS, nb * v_img * sizeof(float), &V);
    if (st == CLG_OK && keeping)
        st = keep_reserve(ctx, g, g->N * v_img + nr + LANES);
    for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++)
        st = filter_transform(ctx, opts, g, &w, b, gi, U, gi * u_group);
    for (size_t n0 = 0; n0 < g->N && st == CLG_OK; n0 += nb) {
        size_t cnt = g->N - n0 < nb ? g->N - n0 : nb, T = cnt * tiles;
        rows v = keeping ? kept_rows(g, g->N * tiles, n0 * tiles, w.ldv) : (rows){V, T, 0};
        grid_copy in = input_grid(&w);
        /* the whole batch's copy, or this chunk's */
        size_t q_off = shared || keeping_grid ? xq_base + n0 * xq_img : 0;
        if (!shared)
            st = pad(ctx, opts, &in, a, n0, cnt, xq, q_off);
        for (size_t gi = 0; gi < g->G && st == CLG_OK; gi++) {
            if (fusing) {
                st = fused(ctx, opts, mr, g, &w, &in, xq, q_off, T, U, gi * u_group, out, n0, gi);
                continue;
            }
            st = transform(ctx, opts, "clg_wino_input", &in, &w, xq, q_off, gi * w.ins, w.ins, T,
                           v, w.ldv);
            if (st == CLG_OK)
                st = products(ctx, opts, mr, nr, g, &w, v, T, U, gi * u_group, out, n0, gi);
        }
    }
    if (st == CLG_OK && (keeping || keeping_grid)) {
        g->keep->n = g->N;
        g->keep->grid = keeping_grid;
    }
    return st;
}
