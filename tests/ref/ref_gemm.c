/* Plain C GEMM in double precision; see ref_gemm.h. */
#include "ref_gemm.h"

void ref_sgemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha, const float *a,
               size_t lda, const float *b, size_t ldb, double beta, const float *c, size_t ldc,
               double *out)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t p = 0; p < k; p++) {
                double x = ta ? a[p * lda + i] : a[i * lda + p];
                double y = tb ? b[j * ldb + p] : b[p * ldb + j];
                s += x * y;
            }
            out[i * n + j] = alpha * s + (beta != 0 ? beta * (double)c[i * ldc + j] : 0.0);
        }
}
