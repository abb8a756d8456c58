/* Programs per context: built lazily per (kernel family, build options), from memory, the
 * binary cache or source, in that order. common.cl is the first source of every family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_internal.h"
#include "runtime_internal.h"

#define LOG_HEAD 1200

const clg__kernel_source *clg__kernel_source_find(const char *family)
{
    for (size_t i = 0; i < clg__kernel_source_count; i++)
        if (strcmp(clg__kernel_sources[i].family, family) == 0)
            return &clg__kernel_sources[i];
    return NULL;
}

int clg__kernel_source_is_header(const char *family)
{
    size_t len = strlen(family);
    return len > 2 && strcmp(family + len - 2, "_h") == 0;
}

const char *clg__cl_std_option(const char *version)
{
    int major = 0, minor = 0;
    if (!version || sscanf(version, "OpenCL C %d.%d", &major, &minor) != 2)
        return "";
    return major > 1 || (major == 1 && minor >= 2) ? "-cl-std=CL1.2 " : "";
}

static char *full_options(const clg_ctx *ctx, const char *options)
{
    /* No fast-math flags: results must stay comparable across devices. */
    const char *base = ctx->cl_std;
    size_t n = strlen(base) + (options ? strlen(options) : 0) + 1;
    char *s = clg__malloc(n);
    if (s)
        snprintf(s, n, "%s%s", base, options ? options : "");
    return s;
}

static clg_status build_failed(clg_ctx *ctx, cl_program prog, cl_int err, const char *name)
{
    size_t size = 0;
    char head[LOG_HEAD + 1] = "";
    cl_device_id d = (cl_device_id)ctx->device.cl_device;
    if (clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        size > 1) {
        char *log = clg__malloc(size);
        if (log && clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, size, log, NULL) == CL_SUCCESS)
            snprintf(head, sizeof head, "%s", log);
        free(log);
    }
    return clg__fail(ctx, CLG_ERR_BUILD, "building OpenCL program \"%s\" for %s failed (%s): %s",
                     name, ctx->device.name, clg__cl_error_name(err), head[0] ? head : "(no log)");
}

static void print_build_log(clg_ctx *ctx, cl_program prog, const char *name,
                            const char *options)
{
    size_t size = 0;
    cl_device_id d = (cl_device_id)ctx->device.cl_device;
    char *log = NULL;
    if (clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        size > 1 && (log = clg__malloc(size)) != NULL &&
        clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, size, log, NULL) == CL_SUCCESS)
        fprintf(stderr, "clgrad: build log of \"%s\" (%s) for %s:\n%s\n", name,
                options ? options : "", ctx->device.name, log);
    free(log);
}

static clg_status build_from_strings(clg_ctx *ctx, const char *name, cl_uint count,
                                     const char **strings, const char *options, cl_program *out)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx->context, count, strings, NULL, &err);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "clCreateProgramWithSource(%s)", name);
    cl_device_id d = (cl_device_id)ctx->device.cl_device;
    err = clBuildProgram(prog, 1, &d, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        clg_status st = build_failed(ctx, prog, err, name);
        clReleaseProgram(prog);
        return st;
    }
    if (ctx->env.build_log) /* kernel authors: the compiler's words */
        print_build_log(ctx, prog, name, options);
    *out = prog;
    return CLG_OK;
}

clg_status clg__program_build_source(clg_ctx *ctx, const char *name, const char *source,
                                     const char *options, cl_program *out)
{
    char *opts = full_options(ctx, options);
    if (!opts)
        return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "building %s: out of memory", name);
    clg_status st = build_from_strings(ctx, name, 1, &source, opts, out);
    free(opts);
    return st;
}

/* The entry kept for a program whose driver caches its kernels itself (clg__driver_caches):
 * not a binary, only the word that it was built here before, so that a later build from
 * source, served by the driver's cache, is counted as from a cache and not announced. */
static const char DRIVER_KEPT[] = "clgrad: built before; the driver keeps its kernels\n";

static int is_driver_kept(const unsigned char *bin, size_t size)
{
    return size == sizeof DRIVER_KEPT - 1 && memcmp(bin, DRIVER_KEPT, size) == 0;
}

/* What the cache holds for key: a program from its binary (returned), the driver-kept word
 * (*kept = 1 where this context's driver caches; NULL returned), or nothing usable. */
static cl_program load_cached(clg_ctx *ctx, const unsigned char key[32], const char *options,
                              int *kept)
{
    size_t size;
    int found;
    *kept = 0;
    unsigned char *bin = clg__bincache_load(ctx->cache_dir, key, &size, &found);
    if (!bin) {
        ctx->stats.cache_rejected += (unsigned)found;
        return NULL;
    }
    if (is_driver_kept(bin, size)) { /* with POCL_KERNEL_CACHE=0 since: a miss */
        *kept = ctx->driver_caches;
        free(bin);
        return NULL;
    }
    cl_device_id d = (cl_device_id)ctx->device.cl_device;
    const unsigned char *bins[1] = {bin};
    cl_int status = CL_SUCCESS, err;
    cl_program prog = clCreateProgramWithBinary(ctx->context, 1, &d, &size, bins, &status, &err);
    free(bin);
    if (err == CL_SUCCESS && status == CL_SUCCESS)
        err = clBuildProgram(prog, 1, &d, options, NULL, NULL);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
        if (prog)
            clReleaseProgram(prog);
        ctx->stats.cache_rejected++;
        return NULL;
    }
    return prog;
}

/* Keeps the program's binary, or where the driver caches its kernels the driver-kept word. */
static void store_cached(clg_ctx *ctx, const unsigned char key[32], cl_program prog)
{
    if (ctx->driver_caches) {
        ctx->stats.cache_writes += (unsigned)clg__bincache_store(
            ctx->cache_dir, key, (const unsigned char *)DRIVER_KEPT, sizeof DRIVER_KEPT - 1);
        return;
    }
    size_t size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *bin = clg__malloc(size);
    unsigned char *bins[1] = {bin};
    if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
        ctx->stats.cache_writes += (unsigned)clg__bincache_store(ctx->cache_dir, key, bin, size);
    free(bin);
}

static clg_status obtain(clg_ctx *ctx, const clg__kernel_source *src, const char *options,
                         cl_program *out)
{
    const clg__kernel_source *common = clg__kernel_source_find("common");
    if (!common)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "common.cl is not embedded");
    /* A family F may have a header source F_h (e.g. generated code), put before it; a family
     * F_variant without one shares F's (winograd_gpu takes winograd_h). */
    char hname[72];
    snprintf(hname, sizeof hname, "%s_h", src->family);
    const clg__kernel_source *hdr = clg__kernel_source_find(hname);
    const char *cut = strrchr(src->family, '_');
    if (!hdr && cut) {
        snprintf(hname, sizeof hname, "%.*s_h", (int)(cut - src->family), src->family);
        hdr = clg__kernel_source_find(hname);
    }
    char digest[3 * 65 + 1];
    snprintf(digest, sizeof digest, "%s+%s+%s", common->sha256, hdr ? hdr->sha256 : "",
             src->sha256);
    unsigned char key[32];
    clg__bincache_key(ctx, digest, options, key);
    int kept = 0;
    if (ctx->cache_dir && (*out = load_cached(ctx, key, options, &kept)) != NULL) {
        ctx->stats.programs_from_cache++;
        return CLG_OK;
    }
    char line[96], hline[96];
    snprintf(line, sizeof line, "\n#line 1 \"%s.cl\"\n", src->family);
    snprintf(hline, sizeof hline, "\n#line 1 \"%s.cl\"\n", hname);
    const char *strings[5] = {common->text, hline, hdr ? hdr->text : "", line, src->text};
    int announce = ctx->on_build && !kept;
    if (announce)
        ctx->on_build(ctx->on_build_user, src->family, 0.0);
    double t0 = clg__now();
    clg_status st = build_from_strings(ctx, src->family, 5, strings, options, out);
    if (announce)
        ctx->on_build(ctx->on_build_user, src->family, clg__now() - t0 + 1e-9);
    if (st != CLG_OK)
        return st;
    if (kept) {
        ctx->stats.programs_from_cache++;
        return CLG_OK;
    }
    ctx->stats.programs_from_source++;
    if (ctx->cache_dir)
        store_cached(ctx, key, *out);
    return CLG_OK;
}

clg_status clg__program_get(clg_ctx *ctx, const char *family, const char *options,
                            cl_program *out)
{
    /* Looked up on every launch: compare the caller's options as given, allocate nothing. */
    const char *given = options ? options : "";
    for (size_t i = 0; i < ctx->program_count; i++) {
        clg__program_entry *e = &ctx->programs[i];
        if (strcmp(e->family, family) == 0 && strcmp(e->options, given) == 0) {
            *out = e->program;
            return CLG_OK;
        }
    }
    const clg__kernel_source *src = clg__kernel_source_find(family);
    if (!src || strlen(family) >= sizeof ctx->programs[0].family)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "no embedded kernel family \"%s\"", family);
    char *opts = full_options(ctx, options), *kept = clg__strdup(given);
    int room = ctx->program_count < ctx->program_cap;
    if (opts && kept && !room) {
        size_t cap = ctx->program_cap ? 2 * ctx->program_cap : 8;
        clg__program_entry *grown = clg__realloc(ctx->programs, cap * sizeof *grown);
        if (grown) {
            ctx->programs = grown;
            ctx->program_cap = cap;
            room = 1;
        }
    }
    if (!opts || !kept || !room) {
        free(opts);
        free(kept);
        return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "program %s: out of memory", family);
    }
    double t0 = clg__now();
    cl_program prog;
    clg_status st = obtain(ctx, src, opts, &prog);
    ctx->stats.build_seconds += clg__now() - t0;
    free(opts);
    if (st != CLG_OK) {
        free(kept);
        return st;
    }
    clg__program_entry *e = &ctx->programs[ctx->program_count++];
    snprintf(e->family, sizeof e->family, "%s", family);
    e->options = kept;
    e->program = prog;
    *out = prog;
    return CLG_OK;
}

clg_status clg__kernel_get(clg_ctx *ctx, const char *family, const char *options,
                           const char *kernel_name, cl_kernel *out)
{
    cl_program prog;
    clg_status st = clg__program_get(ctx, family, options, &prog);
    if (st != CLG_OK)
        return st;
    for (size_t i = 0; i < ctx->kernel_count; i++)
        if (ctx->kernels[i].program == prog && strcmp(ctx->kernels[i].name, kernel_name) == 0) {
            *out = ctx->kernels[i].kernel;
            return CLG_OK;
        }
    if (strlen(kernel_name) >= sizeof ctx->kernels[0].name)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "kernel name %s too long", kernel_name);
    if (ctx->kernel_count == ctx->kernel_cap) {
        size_t cap = ctx->kernel_cap ? 2 * ctx->kernel_cap : 16;
        clg__kernel_entry *grown = clg__realloc(ctx->kernels, cap * sizeof *grown);
        if (!grown)
            return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "kernel %s: out of memory", kernel_name);
        ctx->kernels = grown;
        ctx->kernel_cap = cap;
    }
    cl_int err;
    cl_kernel k = clCreateKernel(prog, kernel_name, &err);
    if (err != CL_SUCCESS)
        return clg__fail_cl(ctx, err, "clCreateKernel(%s) from %s.cl", kernel_name, family);
    clg__kernel_entry *e = &ctx->kernels[ctx->kernel_count++];
    e->program = prog;
    snprintf(e->name, sizeof e->name, "%s", kernel_name);
    e->kernel = k;
    *out = k;
    return CLG_OK;
}
