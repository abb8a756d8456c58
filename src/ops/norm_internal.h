/* Batch normalisation's build options, shared by its launches and the warm-up. */
#ifndef CLGRAD_OPS_NORM_INTERNAL_H
#define CLGRAD_OPS_NORM_INTERNAL_H

#include "tensor/tensor_internal.h"

/* Work-items of a channel's reduction (cl_kernels/batchnorm.cl's BN_LOCAL). */
#define CLG__BN_LOCAL 64
#define CLG__BN_OPTIONS "-DBN_LOCAL=" CLG__STR(CLG__BN_LOCAL)

#endif
