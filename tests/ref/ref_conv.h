/* Plain C convolution in double precision, straight from the definition: the reference for
 * every algorithm and pass. */
#ifndef CLGRAD_REF_CONV_H
#define CLGRAD_REF_CONV_H

#include <stddef.h>

typedef struct ref_conv {
    size_t N, C, H, W, K, R, S, sh, sw, pt, pb, pl, pr, dh, dw, G;
    size_t P, Q; /* filled by ref_conv_init */
} ref_conv;

/* Computes P and Q; returns 0 when the kernel does not fit the padded input. */
int ref_conv_init(ref_conv *g);

/* y = conv(x, w) + bias (bias may be NULL); arrays NCHW / KCRS, float in, double out. */
void ref_conv_forward(const ref_conv *g, const float *x, const float *w, const float *bias, double *y);
/* dx = d(sum(dy * y))/dx */
void ref_conv_backward_data(const ref_conv *g, const float *dy, const float *w, double *dx);
/* dw = d(sum(dy * y))/dw, summed over the batch */
void ref_conv_backward_weights(const ref_conv *g, const float *x, const float *dy, double *dw);
/* db[k] = sum over n, p, q of dy */
void ref_conv_backward_bias(const ref_conv *g, const float *dy, double *db);

/* Forward in double from double inputs (for finite differences of the reference itself). */
void ref_conv_forward_d(const ref_conv *g, const double *x, const double *w, double *y);

#endif
