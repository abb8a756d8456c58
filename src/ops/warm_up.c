/* clg_ctx_warm_up: every kernel family's programs, built with the options the ops will use,
 * so that start-up cost is paid (and measured) in one place. */
#include <string.h>
#include "ops/conv/conv_internal.h"
#include "ops/gemm_internal.h"
#include "runtime/kernels_internal.h"
#include "ops/norm_internal.h"
#include "tensor/tensor_internal.h"

clg_status clg_ctx_warm_up(clg_ctx *ctx)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_ctx_warm_up: ctx is NULL");
    clg_status tuned = clg_gemm_tune_if_wanted(ctx); /* the programs then take its blocks */
    if (tuned != CLG_OK)
        return tuned;
    for (size_t i = 0; i < clg__kernel_source_count; i++) {
        const char *family = clg__kernel_sources[i].family;
        cl_program prog;
        clg_status st = CLG_OK;
        if (clg__kernel_source_is_header(family))
            continue; /* built with its family */
        if (strcmp(family, "gemm") == 0)
            st = clg__gemm_warm_up(ctx); /* tuned options, and gemm_tile's where it is used */
        else if (strcmp(family, "gemm_tile") == 0)
            continue;
        else if (clg__conv_family(family))
            continue; /* below, algorithm by algorithm */
        else if (strcmp(family, "tensor") == 0)
            st = clg__program_get(ctx, family, CLG__TENSOR_OPTIONS, &prog);
        else if (strcmp(family, "batchnorm") == 0)
            st = clg__program_get(ctx, family, CLG__BN_OPTIONS, &prog);
        else if (strcmp(family, "common") != 0)
            st = clg__program_get(ctx, family, NULL, &prog);
        if (st != CLG_OK)
            return st;
    }
    return clg__conv_warm_up(ctx);
}
