/* Every allocation of the library goes through here, so that tests can make the Nth host
 * allocation or the Nth device buffer fail (fault injection) and check that each failure comes
 * back as a clean error without leaks. The counters are per thread: tests on one thread do not
 * disturb another's work. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "runtime_internal.h"

static _Thread_local long host_fail_at, device_fail_at, host_count, device_count;

void clg__fault_inject(long host_n, long device_n)
{
    host_fail_at = host_n;
    device_fail_at = device_n;
    host_count = device_count = 0;
}

void clg__fault_counts(long *host, long *device)
{
    *host = host_count;
    *device = device_count;
}

static int host_fails(void)
{
    if (++host_count != host_fail_at)
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
    if (++device_count == device_fail_at) {
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
