/* The OpenCL C sources embedded at build time (see cmake/EmbedKernels.cmake). */
#ifndef CLGRAD_KERNELS_INTERNAL_H
#define CLGRAD_KERNELS_INTERNAL_H

#include <stddef.h>

typedef struct clg__kernel_source {
    const char *family;    /* "common", "tensor", "gemm", ... (file name without .cl); a name
                              ending in "_h" is a header put before its family's source */
    const char *text;      /* NUL-terminated OpenCL C */
    const size_t *length;  /* bytes, without the NUL */
    const char *sha256;    /* hex SHA-256 of the .cl file */
} clg__kernel_source;

extern const clg__kernel_source clg__kernel_sources[];
extern const size_t clg__kernel_source_count;

/* The embedded family of that name, or NULL. */
const clg__kernel_source *clg__kernel_source_find(const char *family);

/* Whether the family is a header ("F_h"), built only as part of family F. */
int clg__kernel_source_is_header(const char *family);

#endif
