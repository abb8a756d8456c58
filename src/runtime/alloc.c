/* Every allocation of the library goes through here, so that a testing build can make the Nth
 * host allocation or the Nth device buffer fail and tests check that each failure comes back as
 * a clean error without leaks. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "runtime/runtime_internal.h"
#include "runtime/testing.h"

static int host_fails(void)
{
    if (!clg__testing_host_alloc_fails())
        return 0;
    errno = ENOMEM; /* as malloc itself would */
    return 1;
}

void *clg__malloc(size_t n)
{
    return host_fails() ? NULL : malloc(n ? n : 1);
}

void *clg__calloc(size_t n, size_t size)
{
    return host_fails() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *clg__realloc(void *p, size_t n)
{
    return host_fails() ? NULL : realloc(p, n ? n : 1);
}

/* Arrays of 2 MiB and more go on transparent huge pages where the kernel offers them only
 * on request (madvise mode, Debian's default): the host's optimizer pass and the kernels that
 * compute in host memory stream them, and 4 KiB pages cost a TLB miss every 1,024 floats
 * (measured: a fused Adam pass over 13 MB arrays on 2 cores, 1.75 -> 1.4 ms). */
enum { HUGE_PAGE = 2u << 20 };

void *clg__malloc_pages(size_t n)
{
    void *p = NULL;
    size_t align = n >= HUGE_PAGE ? HUGE_PAGE : 4096;
    if (host_fails() || posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (align == HUGE_PAGE)
        (void)madvise(p, n / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
    return p;
}

void *clg__calloc_pages(size_t n)
{
    void *p = clg__malloc_pages(n);
    if (p)
        memset(p, 0, n ? n : 1);
    return p;
}

char *clg__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = clg__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Every device buffer: the injected failure, else clCreateBuffer. */
static cl_mem create(clg_ctx *ctx, cl_mem_flags flags, size_t bytes, void *host, cl_int *err)
{
    if (clg__testing_device_alloc_fails()) {
        *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    return clCreateBuffer(ctx->context, flags, bytes, host, err);
}

cl_mem clg__create_buffer(clg_ctx *ctx, size_t bytes, cl_int *err)
{
    return create(ctx, CL_MEM_READ_WRITE, bytes, NULL, err);
}

cl_mem clg__create_host_buffer(clg_ctx *ctx, void *host, size_t bytes, cl_int *err)
{
    return create(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, err);
}

clg_status clg__options_read(void *out, const void *given, size_t full, const char *what)
{
    size_t size;
    memcpy(&size, given, sizeof size);
    if (size < sizeof size || size > full)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "%s: struct_size %zu is not one this library "
                         "knows (%zu): start from the struct's _default()", what, size, full);
    memcpy(out, given, size);
    memcpy(out, &full, sizeof full); /* now a whole struct */
    return CLG_OK;
}
