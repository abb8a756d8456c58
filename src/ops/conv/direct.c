/* Direct convolution: per-pixel kernels that read the input in place, CB channels per
 * work-item (cl_kernels/conv.cl). No workspace: the implicit algorithm's fallback when its
 * shifted rows do not apply or fit. */
#include "ops/conv/conv_internal.h"

enum { LOCAL0 = 16 };

clg_status clg__conv_direct_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                                const clg_tensor *a, const clg_tensor *b, clg_tensor *out)
{
    static const char *const names[] = {"clg_conv_implicit_fwd", "clg_conv_implicit_bwd_data",
                                        "clg_conv_implicit_bwd_weights"};
    clg__launch l;
    clg_status st = clg__launch_begin(ctx, "conv", CLG__CONV_DIRECT_OPTIONS, names[pass], &l);
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
    size_t fwd_blocks = g->G * ((g->Kg + CLG__CONV_DIRECT_CB - 1) / CLG__CONV_DIRECT_CB), bwd_blocks = g->G * ((g->Cg + CLG__CONV_DIRECT_CB - 1) / CLG__CONV_DIRECT_CB);
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
