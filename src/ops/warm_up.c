/* clg_ctx_warm_up: every kernel family's programs, built with the options the ops will use,
 * so that start-up cost is paid (and measured) in one place. */
#include <string.h>
#include "conv_internal.h"
#include "gemm_internal.h"
#include "runtime/kernels_internal.h"
#include "tensor/tensor_internal.h"

clg_status clg_ctx_warm_up(clg_ctx *ctx)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_warm_up: ctx is NULL");
    for (size_t i = 0; i < clg__kernel_source_count; i++) {
        const char *family = clg__kernel_sources[i].family;
        cl_program prog;
        clg_status st = CLG_OK;
        if (clg__kernel_source_is_header(family))
            continue; /* built with its family */
        if (strcmp(family, "gemm") == 0)
            st = clg__gemm_warm_up(ctx); /* tuned options */
        else if (strcmp(family, "conv_shift") == 0) { /* the GEMM's tile sizes */
            char opts[48];
            st = clg__conv_shift_options(ctx, opts, sizeof opts);
            if (st == CLG_OK)
                st = clg__program_get(ctx, family, opts, &prog);
        } else if (strcmp(family, "winograd") == 0) { /* 3x3 and 5x5 programs */
            char opts[64];
            for (size_t r = 3; r <= 5 && st == CLG_OK; r += 2) {
                st = clg__conv_winograd_options(ctx, r, opts, sizeof opts);
                if (st == CLG_OK)
                    st = clg__program_get(ctx, family, opts, &prog);
            }
        } else if (strcmp(family, "tensor") == 0) {
            st = clg__program_get(ctx, family, CLG__TENSOR_OPTIONS, &prog);
        } else if (strcmp(family, "common") != 0)
            st = clg__program_get(ctx, family, NULL, &prog);
        if (st != CLG_OK)
            return st;
    }
    return CLG_OK;
}
