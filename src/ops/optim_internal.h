/* The host solvers on a gradient summed as it is read, for the device group's pass over the
 * master weights. */
#ifndef CLGRAD_OPS_OPTIM_INTERNAL_H
#define CLGRAD_OPS_OPTIM_INTERNAL_H

#include "clgrad/optim.h"

/* The gradient of element i: (acc[i] + last[i]) * inv, or last[i] * inv where acc is NULL. */
typedef struct clg__grad_sum {
    const float *acc, *last;
    float inv;
} clg__grad_sum;

clg_status clg__sgd_step_host_sum(const clg_sgd_params *p, float *w, const clg__grad_sum *g,
                                  float *v, size_t n);
clg_status clg__adam_step_host_sum(const clg_adam_params *p, float *w, const clg__grad_sum *g,
                                   float *m, float *v, size_t n);
clg_status clg__rmsprop_step_host_sum(const clg_rmsprop_params *p, float *w,
                                      const clg__grad_sum *g, float *v, size_t n);

#endif
