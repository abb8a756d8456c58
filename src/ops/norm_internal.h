/* Batch normalisation's build options, shared by its launches and the warm-up. */
#ifndef CLGRAD_OPS_NORM_INTERNAL_H
#define CLGRAD_OPS_NORM_INTERNAL_H

#include "tensor/tensor_internal.h"

/* Work-items of a channel's reduction (cl_kernels/batchnorm.cl's BN_LOCAL). */
#define CLG__BN_LOCAL 64
/* Work-group of the CPU form's elementwise kernels (a work-item per plane). */
#define CLG__BN_PLANES_LOCAL 8
#define CLG__BN_OPTIONS "-DBN_LOCAL=" CLG__STR(CLG__BN_LOCAL)

/* The forward passes with a residual sum fused in: y = bn(x) + residual (same shape; NULL:
 * none), then max(y, 0) when relu. For a network's batch norm that an add alone reads. */
clg_status clg__batchnorm_train_sum(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *gamma,
                                    const clg_tensor *beta, float momentum, float eps,
                                    clg_tensor *running_mean, clg_tensor *running_var,
                                    clg_tensor *save_mean, clg_tensor *save_invstd,
                                    const clg_tensor *residual, int relu, clg_tensor *y);
clg_status clg__batchnorm_infer_sum(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *gamma,
                                    const clg_tensor *beta, const clg_tensor *running_mean,
                                    const clg_tensor *running_var, float eps,
                                    const clg_tensor *residual, int relu, clg_tensor *y);
/* The backward pass of a batch norm whose ReLU was fused into its forward pass (without a
 * residual sum): relu_beta is the batch norm's beta, dy the gradient of the ReLU's output,
 * masked here where the forward pass's output was not positive (recomputed from x, gamma,
 * beta and the saved statistics as that pass computed it); relu_beta NULL:
 * clg_batchnorm_backward. */
clg_status clg__batchnorm_backward_relu(clg_ctx *ctx, const clg_tensor *x, const clg_tensor *dy,
                                        const clg_tensor *relu_beta, const clg_tensor *gamma,
                                        const clg_tensor *save_mean,
                                        const clg_tensor *save_invstd, clg_tensor *dx,
                                        clg_tensor *dgamma, clg_tensor *dbeta);

#endif
