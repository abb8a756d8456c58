#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */
#include "gemm_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gemm_set_apply(const char *tool, const char *opt, const char *set, clg_gemm_params *p)
{
    char *copy = strdup(set), *save = NULL;
    int ok = copy != NULL;
    for (char *kv = copy ? strtok_r(copy, ",", &save) : NULL; kv && ok; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        if (!eq || clg_gemm_params_set_field(p, kv, eq + 1) != CLG_OK) {
            fprintf(stderr, "%s: --%s: %s\n", tool, opt, eq ? clg_last_error() : "K=V expected");
            ok = 0;
        }
    }
    free(copy);
    return ok;
}
