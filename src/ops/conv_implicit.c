/* Implicit convolution: no column matrix. Stride-1 layers whose padded input fits the workspace
 * run as products over shifted rows (conv_shift.c); the rest, and any layer when even that
 * does not fit, run fused per-pixel kernels that read the input in place (no workspace). */
#include "conv_internal.h"

enum { CB = 8, LOCAL0 = 16 };

clg_status clg__conv_implicit_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                  const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    if (clg__conv_shift_fits(ctx, g, pass))
        return clg__conv_shift_run(ctx, g, pass, a, b, out);
    static const char *const names[] = {"clg_conv_implicit_fwd", "clg_conv_implicit_bwd_data",
                                        "clg_conv_implicit_bwd_weights"};
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", "-DCB=8", names[pass], &l);
    if (st != CLG_OK)
        return st;
    clg__arg_tensor(&l, a);
    clg__arg_tensor(&l, b);
    clg__arg_tensor(&l, out);
    if (pass == CLG_CONV_BWD_WEIGHTS)
        clg__arg_u32(&l, g->N);
    size_t v[] = {g->C, g->H, g->W, g->K, g->Cg, g->Kg, g->R, g->S, g->P, g->Q, g->sh, g->sw,
                  g->pt, g->pl, g->dh, g->dw};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        clg__arg_u32(&l, v[i]);
    size_t local[3] = {LOCAL0, 1, 1};
    /* Channel blocks never cross a group, so count blocks per group. */
    size_t fwd_blocks = g->G * ((g->Kg + CB - 1) / CB), bwd_blocks = g->G * ((g->Cg + CB - 1) / CB);
    size_t global[3];
    if (pass == CLG_CONV_FWD) {
        global[0] = g->P * g->Q;
        global[1] = fwd_blocks;
        global[2] = g->N;
    } else if (pass == CLG_CONV_BWD_DATA) {
        global[0] = g->H * g->W;
        global[1] = bwd_blocks;
        global[2] = g->N;
    } else {
        global[0] = g->Cg * g->R * g->S;
        global[1] = g->K;
        global[2] = 1;
    }
    return clg__launch_run(&l, global, local);
}
