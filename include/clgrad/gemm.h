/* GEMM: single-precision matrix products, row-major, on tensors. */
#ifndef CLGRAD_GEMM_H
#define CLGRAD_GEMM_H

#include <stddef.h>
#include "clgrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum clg_transpose { CLG_NO_TRANS = 0, CLG_TRANS = 1 } clg_transpose;

/* A matrix inside a tensor's memory: element offset from the tensor's first element, and the
 * leading dimension (distance between rows, row-major). The tensor's shape is ignored; only its
 * element count bounds the matrix. */
typedef struct clg_matrix {
    const clg_tensor *t;
    size_t offset;
    size_t ld;
} clg_matrix;

/** C = alpha * op(A) * op(B) + beta * C, row-major, with op(A) m x k and op(B) k x n, like
 *  BLAS sgemm. A is stored m x k (k x m when transposed) with lda >= its column count; same
 *  for B (k x n, or n x k) and C (m x n, ldc >= n). beta = 0 does not read C (NaN there is
 *  overwritten). m = 0 or n = 0 does nothing; k = 0 sets C = beta * C.
 *  Queued on c's context; A, B and C must live on it.
 *  @return CLG_OK; CLG_ERR_INVALID_ARG (NULL, ld too small, a matrix past its buffer, sizes
 *          above 2^32-1, tensors on different contexts) with a message; CLG_ERR_BUILD,
 *          CLG_ERR_OPENCL, CLG_ERR_OUT_OF_DEVICE_MEMORY from the device. */
CLG_API clg_status clg_sgemm(clg_ctx *ctx, clg_transpose ta, clg_transpose tb, size_t m, size_t n,
                             size_t k, float alpha, clg_matrix a, clg_matrix b, float beta,
                             clg_matrix c);

/** `batch` independent products; product i uses A, B and C moved by i * stride_a, stride_b and
 *  stride_c elements. Same rules as clg_sgemm; batch = 0 does nothing. */
CLG_API clg_status clg_sgemm_batched(clg_ctx *ctx, clg_transpose ta, clg_transpose tb, size_t m,
                                     size_t n, size_t k, float alpha, clg_matrix a,
                                     size_t stride_a, clg_matrix b, size_t stride_b, float beta,
                                     clg_matrix c, size_t stride_c, size_t batch);

typedef enum clg_gemm_backend {
    CLG_GEMM_AUTO = 0,    /* per shape class, whichever the tuning file measured faster;
                             built-in when untuned */
    CLG_GEMM_BUILTIN = 1, /* clgrad's kernels (cl_kernels/gemm.cl) */
    CLG_GEMM_CLBLAST = 2  /* CLBlast, when the library was built with it */
} clg_gemm_backend;

/** Chooses the backend of ctx's GEMMs (default: $CLGRAD_GEMM = builtin|clblast|auto, else
 *  auto). @return CLG_OK; CLG_ERR_UNSUPPORTED for CLBlast in a build without it. */
CLG_API clg_status clg_gemm_set_backend(clg_ctx *ctx, clg_gemm_backend backend);

/** The backend ctx's GEMMs use now (as set, or from CLGRAD_GEMM as the context read it). */
CLG_API clg_status clg_gemm_get_backend(clg_ctx *ctx, clg_gemm_backend *out);

/** 1 when this build of the library can use CLBlast. */
CLG_API int clg_gemm_has_clblast(void);

/* Shape classes by work, 2*m*n*k*batch: small <= 2^22 flops < medium <= 2^30 < large. */
typedef enum clg_gemm_class {
    CLG_GEMM_CLASS_SMALL = 0,
    CLG_GEMM_CLASS_MEDIUM = 1,
    CLG_GEMM_CLASS_LARGE = 2
} clg_gemm_class;
#define CLG_GEMM_CLASSES 3

/** Class of a problem (see clg_gemm_class). */
CLG_API clg_gemm_class clg_gemm_classify(size_t m, size_t n, size_t k, size_t batch);

#ifdef __cplusplus
}
#endif
#endif
