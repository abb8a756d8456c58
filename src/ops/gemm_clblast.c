/* The CLBlast backend (optional: compiled with CLGRAD_HAVE_CLBLAST). */
#include "gemm_internal.h"

#ifdef CLGRAD_HAVE_CLBLAST
#include <clblast_c.h>

int clg_gemm_has_clblast(void)
{
    return 1;
}

clg_status clg__gemm_clblast(clg_ctx *ctx, const clg__gemm_call *g)
{
    CLBlastTranspose ta = g->ta ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose tb = g->tb ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastStatusCode rc;
    if (g->batch == 1)
        rc = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, g->alpha, g->a, g->a_off,
                          g->lda, g->b, g->b_off, g->ldb, g->beta, g->c, g->c_off, g->ldc,
                          &ctx->queue, NULL);
    else
        rc = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, g->alpha,
                                        g->a, g->a_off, g->lda, g->sa, g->b, g->b_off, g->ldb, g->sb,
                                        g->beta, g->c, g->c_off, g->ldc, g->sc, g->batch,
                                        &ctx->queue, NULL);
    if (rc != CLBlastSuccess)
        return clg__fail(ctx, rc == CLBlastOpenCLOutOfResources || rc == CLBlastOpenCLOutOfHostMemory
                                  ? CLG_ERR_OUT_OF_DEVICE_MEMORY : CLG_ERR_OPENCL,
                         "clg_sgemm: CLBlast returned status %d for %zux%zux%zu", (int)rc, g->m,
                         g->n, g->k);
    return CLG_OK;
}

#else

int clg_gemm_has_clblast(void)
{
    return 0;
}

clg_status clg__gemm_clblast(clg_ctx *ctx, const clg__gemm_call *g)
{
    (void)g;
    return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "clg_sgemm: this clgrad was built without CLBlast");
}

#endif
