/* Winograd F(2x2, 3x3) for 3x3 stride-1 layers: forward, and backward-data as the forward of
 * dy with the flipped, transposed filters and padding 2 - p. */
#include "conv_internal.h"
#include "gemm_internal.h"

enum { LOCAL0 = 16 };

/* The layer seen as a forward convolution from `in` to `out` channels. */
typedef struct wino_problem {
    size_t N, Ctot_in, Cin, Hin, Win, Ctot_out, Cout, Hout, Wout, G, pt, pl;
    int flip;
} wino_problem;

static clg_status filter_transform(clg_ctx *ctx, const clg__conv_geom *g, const wino_problem *w,
                                   const clg_tensor *wt, cl_mem U)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", NULL, "clg_wino_filter", &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, wt);
    clg__arg_u32(&l, g->Kg);
    clg__arg_u32(&l, g->Cg);
    clg__arg_u32(&l, (size_t)w->flip);
    clg__arg_mem(&l, U);
    size_t global[3] = {w->Cin, w->Cout, w->G}, local[3] = {1, 1, 1};
    return clg__launch_run(&l, global, local);
}

static clg_status input_transform(clg_ctx *ctx, const wino_problem *w, const clg_tensor *x,
                                  size_t n0, size_t nb, size_t gi, size_t th, size_t tw,
                                  cl_mem V, size_t T)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", NULL, "clg_wino_input", &l);
    if (st != CLG_OK)
        return st;
    size_t img = w->Ctot_in * w->Hin * w->Win;
    clg__arg_mem(&l, x->mem);
    clg__arg_u64(&l, x->offset + n0 * img + gi * w->Cin * w->Hin * w->Win);
    clg__arg_u64(&l, img);
    clg__arg_u32(&l, w->Cin);
    clg__arg_u32(&l, w->Hin);
    clg__arg_u32(&l, w->Win);
    clg__arg_u32(&l, w->pt);
    clg__arg_u32(&l, w->pl);
    clg__arg_u32(&l, th);
    clg__arg_u32(&l, tw);
    clg__arg_u64(&l, T);
    clg__arg_mem(&l, V);
    size_t global[3] = {th * tw, w->Cin, nb}, local[3] = {LOCAL0, 1, 1};
    return clg__launch_run(&l, global, local);
}

static clg_status output_transform(clg_ctx *ctx, const wino_problem *w, cl_mem M, size_t m_off,
                                   size_t T, size_t th, size_t tw, clg_tensor *y, size_t n0,
                                   size_t nb, size_t gi)
{
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "winograd", NULL, "clg_wino_output", &l);
    if (st != CLG_OK)
        return st;
    size_t img = w->Ctot_out * w->Hout * w->Wout;
    clg__arg_mem(&l, M);
    clg__arg_u64(&l, m_off);
    clg__arg_u64(&l, T);
    clg__arg_u32(&l, w->Cout);
    clg__arg_u32(&l, th);
    clg__arg_u32(&l, tw);
    clg__arg_mem(&l, y->mem);
    clg__arg_u64(&l, y->offset + n0 * img + gi * w->Cout * w->Hout * w->Wout);
    clg__arg_u64(&l, img);
    clg__arg_u32(&l, w->Hout);
    clg__arg_u32(&l, w->Wout);
    size_t global[3] = {th * tw, w->Cout, nb}, local[3] = {LOCAL0, 1, 1};
    return clg__launch_run(&l, global, local);
}

clg_status clg__conv_winograd_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    wino_problem w;
    if (pass == CLG_CONV_FWD) {
        wino_problem f = {g->N, g->C, g->Cg, g->H, g->W, g->K, g->Kg, g->P, g->Q, g->G, g->pt, g->pl, 0};
        w = f;
    } else if (pass == CLG_CONV_BWD_DATA) {
        wino_problem f = {g->N, g->K, g->Kg, g->P, g->Q, g->C, g->Cg, g->H, g->W, g->G,
                          2 - g->pt, 2 - g->pl, 1};
        w = f;
    } else {
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "conv2d: winograd has no weight-gradient form here");
    }
    size_t th = (w.Hout + 1) / 2, tw = (w.Wout + 1) / 2, tiles = th * tw;
    size_t per_image = (w.Cin + w.Cout) * 16 * tiles * sizeof(float);
    size_t nb = clg__conv_chunk(g, per_image);
    cl_mem U, VM;
    clg_status st = clg__scratch_get(ctx, CLG__SLOT_CONV_AUX, 16 * g->K * g->Cg * sizeof(float), &U);
    if (st == CLG_OK)
        st = clg__scratch_get(ctx, CLG__SLOT_CONV_COLS, nb * per_image, &VM);
    if (st == CLG_OK)
        st = filter_transform(ctx, g, &w, b, U);
    for (size_t n0 = 0; n0 < w.N && st == CLG_OK; n0 += nb) {
        size_t cnt = w.N - n0 < nb ? w.N - n0 : nb, T = cnt * tiles;
        size_t m_off = 16 * w.Cin * T; /* M follows V in the same buffer */
        for (size_t gi = 0; gi < w.G && st == CLG_OK; gi++) {
            st = input_transform(ctx, &w, a, n0, cnt, gi, th, tw, VM, T);
            if (st == CLG_OK) { /* M[xi] (Cout x T) = U[gi][xi] (Cout x Cin) . V[xi] (Cin x T) */
                clg__gemm_call c = {CLG_NO_TRANS, CLG_NO_TRANS, w.Cout, T, w.Cin, 16, 1.0f, 0.0f,
                                    U, VM, VM, gi * 16 * w.Cout * w.Cin, 0, m_off, w.Cin, T, T,
                                    w.Cout * w.Cin, w.Cin * T, w.Cout * T};
                st = clg__gemm_dispatch(ctx, &c);
            }
            if (st == CLG_OK)
                st = output_transform(ctx, &w, VM, m_off, T, th, tw, out, n0, cnt, gi);
        }
    }
    return st;
}
