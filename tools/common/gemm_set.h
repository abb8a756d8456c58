/* GEMM parameters changed from a command line's K=V,... (clgrad-tune --set and --from,
 * clgrad-bench gemm --vs). */
#ifndef CLGRAD_TOOLS_GEMM_SET_H
#define CLGRAD_TOOLS_GEMM_SET_H

#include "clgrad/clgrad.h"

/* Sets the fields K=V,... of `set` in p (keys as in a tuning file); 0 with a message on stderr,
 * "TOOL: --OPT: ...", for an unknown key or a bad value. Values are not checked against each
 * other (clg_gemm_set_params does). */
int gemm_set_apply(const char *tool, const char *opt, const char *set, clg_gemm_params *p);

#endif
