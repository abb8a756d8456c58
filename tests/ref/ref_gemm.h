/* Plain C GEMM in double precision: the reference the device kernels are compared with. */
#ifndef CLGRAD_REF_GEMM_H
#define CLGRAD_REF_GEMM_H

#include <stddef.h>

/* out[i*n + j] = alpha * sum_p op(A)[i][p] op(B)[p][j] + beta * C[i*ldc + j] (C read only when
 * beta != 0), with A, B and C row-major with leading dimensions lda, ldb and ldc. */
void ref_sgemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha, const float *a,
               size_t lda, const float *b, size_t ldb, double beta, const float *c, size_t ldc,
               double *out);

#endif
