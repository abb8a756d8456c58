/* GEMM parameters: the default table by device type and vendor, per-device tuning files in the
 * cache folder, and the backend choice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "gemm_internal.h"

#define TUNING_MAGIC "clgrad-gemm-tuning 1"
#define TUNING_MAX_BYTES 65536

/* The default table: the first row whose type, vendor substring (NULL: any) and, for CPUs,
 * class (NONE: any) match a device gives its parameters. Measured rows name the CPU they
 * were measured on; the others are starting points for clgrad-tune. */
typedef struct default_row {
    clg_device_type type;
    const char *vendor;
    clg_cpu_class cpu;
    clg_gemm_params p;
} default_row;

/* 8 x 32 blocks: 16 float16 accumulators of AVX-512's 32 registers; 8 row tiles per group
 * share each B panel in cache, K in blocks of 512, B in place for K < 64 (packing such a B
 * costs more than it saves); below 2^17 flops launch overhead dominates and the
 * one-element-per-item kernel wins. */
#define POCL_AVX512 {CLG_GEMM_KERNEL_REG, 8, 32, 8, 1, 512, 64, 2, 32, 8, 131072.0, 0, 0}
/* Intel's runtime: 6 x 32 blocks, 16 x 2 groups, K in blocks of 128. */
#define INTEL_AVX512 {CLG_GEMM_KERNEL_REG, 6, 32, 16, 2, 128, 1, 2, 32, 8, 131072.0, 0, 0}

static const default_row default_table[] = {
    /* GPUs: local-memory tiles (not measured here: no GPU on the development machines). */
    {CLG_DEVICE_GPU, "NVIDIA", CLG_CPU_CLASS_NONE, {CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0, 32, 8, 65536.0, 0, 0}},
    {CLG_DEVICE_GPU, "Advanced Micro Devices", CLG_CPU_CLASS_NONE, {CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0, 32, 4, 65536.0, 0, 0}},
    {CLG_DEVICE_GPU, "Intel", CLG_CPU_CLASS_NONE, {CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0, 16, 4, 65536.0, 0, 0}},
    {CLG_DEVICE_GPU, NULL, CLG_CPU_CLASS_NONE, {CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0, 16, 4, 65536.0, 0, 0}},
    {CLG_DEVICE_ACCELERATOR, NULL, CLG_CPU_CLASS_NONE, {CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0, 16, 4, 65536.0, 0, 0}},
    /* Intel's OpenCL CPU runtime (vendor "Intel(R) Corporation"; POCL says "GenuineIntel").
     * One FMA port: measured with clgrad-tune on an AMD EPYC (Zen 4) through it: 396 GFLOP/s
     * at 1024^3 (4 x 16 blocks: 261-272). Two ports: not yet measured on such a CPU (no
     * Intel machine was lent), the same start for clgrad-tune. */
    {CLG_DEVICE_CPU, "Intel(R) Corporation", CLG_CPU_CLASS_AVX512_1FMA, INTEL_AVX512},
    {CLG_DEVICE_CPU, "Intel(R) Corporation", CLG_CPU_CLASS_AVX512_2FMA, INTEL_AVX512},
    /* POCL, AVX-512 with one FMA port: measured with clgrad-tune on an AMD EPYC VM (Zen 4
     * class, 2 cores, 233 GFLOP/s FMA peak): 90% of the peak at 2048^3. */
    {CLG_DEVICE_CPU, NULL, CLG_CPU_CLASS_AVX512_1FMA, POCL_AVX512},
    /* POCL, two FMA ports: measured with clgrad-tune all on an AMD EPYC VM with Zen 5's flags
     * (2 cores, 457-477 GFLOP/s FMA peak): no candidate of 49 beat these blocks in paired
     * runs; 387 GFLOP/s at 2048^3, 1.4-2.0x OpenBLAS 0.3.21 on every benchmark shape. An
     * Intel Xeon's two ports are not measured yet (the issue that asked for this row saw
     * 55-62% of a Xeon's peak): run clgrad-tune there. */
    {CLG_DEVICE_CPU, NULL, CLG_CPU_CLASS_AVX512_2FMA, POCL_AVX512},
    /* AVX2: 16 vector registers, so 6 x 32 (12 accumulators + 2 of B). */
    {CLG_DEVICE_CPU, NULL, CLG_CPU_CLASS_AVX2, {CLG_GEMM_KERNEL_REG, 6, 32, 8, 1, 512, 64, 2, 32, 8, 131072.0, 0, 0}},
    /* Anything else: small blocks. */
    {(clg_device_type)0, NULL, CLG_CPU_CLASS_NONE, {CLG_GEMM_KERNEL_REG, 4, 16, 8, 1, 256, 1, 2, 16, 4, 131072.0, 0, 0}},
};

clg_gemm_params clg_gemm_params_default(const clg_device_info *dev)
{
    size_t last = sizeof default_table / sizeof default_table[0] - 1;
    clg_cpu_class cpu = CLG_CPU_CLASS_NONE;
    if (dev) /* an unknown override leaves the detected class (contexts refuse it) */
        (void)clg_device_cpu_class(dev, &cpu);
    for (size_t i = 0; dev && i < last; i++) {
        const default_row *r = &default_table[i];
        if (r->type == dev->type && (!r->vendor || strstr(dev->vendor, r->vendor)) &&
            (r->cpu == CLG_CPU_CLASS_NONE || r->cpu == cpu))
            return r->p;
    }
    return default_table[last].p;
}

size_t clg__gemm_table_rows(clg_device_type type, clg_gemm_params *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof default_table / sizeof default_table[0]; i++)
        if ((default_table[i].type == type || !default_table[i].type) && n < cap)
            out[n++] = default_table[i].p;
    return n;
}

clg_status clg__gemm_params_check(clg_ctx *ctx, const clg_gemm_params *p)
{
    const char *bad = NULL;
    if (p->kernel != CLG_GEMM_KERNEL_REG && p->kernel != CLG_GEMM_KERNEL_LOCAL)
        bad = "kernel must be CLG_GEMM_KERNEL_REG or CLG_GEMM_KERNEL_LOCAL";
    else if (p->mr < 1 || p->mr > 16)
        bad = "mr must be 1..16";
    else if (p->nr < 16 || p->nr > 64 || p->nr % 16)
        bad = "nr must be 16, 32, 48 or 64";
    else if (p->conv_mr > 16)
        bad = "conv_mr must be 0 (mr) or 1..16";
    else if (p->conv_nr != 0 && p->conv_nr != 16 && p->conv_nr != 32)
        bad = "conv_nr must be 0 (nr), 16 or 32";
    else if (p->local_m < 1 || p->local_m > 64)
        bad = "local_m must be 1..64";
    else if (p->local_n < 1 || p->local_n > 64 || p->local_m * p->local_n > 256)
        bad = "local_n must be 1..64, with local_m * local_n <= 256";
    else if (p->kc < 16 || p->kc > 4096)
        bad = "kc must be 16..4096";
    else if (p->stage_b > 2)
        bad = "stage_b must be 0, 1 or 2";
    else if (p->stage_b && (size_t)p->kc * p->nr * sizeof(float) > ctx->device.local_mem_bytes)
        bad = "stage_b: kc * nr floats exceed the device's local memory";
    else if (p->ts < 8 || p->ts > 64 || p->wpt < 1 || p->ts % p->wpt != 0)
        bad = "ts must be 8..64 and a multiple of wpt";
    else if ((size_t)p->ts * (p->ts / p->wpt) > ctx->device.max_work_group_size)
        bad = "ts * ts / wpt exceeds the device's work-group size";
    else if (2u * p->ts * (p->ts + 1) * sizeof(float) > ctx->device.local_mem_bytes)
        bad = "ts needs more local memory than the device has";
    else if (!(p->small_flops >= 0 && p->small_flops < 1e15))
        bad = "small_flops must be >= 0";
    if (bad)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "GEMM parameters: %s", bad);
    return CLG_OK;
}

const char *clg__gemm_class_name(clg_gemm_class c)
{
    static const char *const names[] = {"small", "medium", "large"};
    return (unsigned)c < CLG_GEMM_CLASSES ? names[c] : "unknown";
}

char *clg__gemm_tuning_path(const clg_ctx *ctx)
{
    return clg__device_file_path(ctx, "gemm", ".tune");
}

static int parse_backend(const char *v, clg_gemm_backend *out)
{
    if (strcmp(v, "builtin") == 0)
        *out = CLG_GEMM_BUILTIN;
    else if (strcmp(v, "clblast") == 0 && clg_gemm_has_clblast())
        *out = CLG_GEMM_CLBLAST;
    else
        return 0;
    return 1;
}

static int parse_uint(const char *v, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || end == v || *end || x > 1000000)
        return 0;
    *out = (unsigned)x;
    return 1;
}

/* One "key value" line; returns 0 for an unknown key or a bad value. */
static int parse_line(char *line, clg_gemm_params *p, clg_gemm_backend cb[CLG_GEMM_CLASSES])
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return 0;
    *sp = '\0';
    const char *key = line, *v = sp + 1;
    struct { const char *name; unsigned *field; } uints[] = {
        {"mr", &p->mr}, {"nr", &p->nr}, {"local_m", &p->local_m}, {"local_n", &p->local_n}, {"kc", &p->kc},
        {"pack_min_k", &p->pack_min_k}, {"stage_b", &p->stage_b}, {"ts", &p->ts}, {"wpt", &p->wpt},
        {"conv_mr", &p->conv_mr}, {"conv_nr", &p->conv_nr},
    };
    for (size_t i = 0; i < sizeof uints / sizeof uints[0]; i++)
        if (strcmp(key, uints[i].name) == 0)
            return parse_uint(v, uints[i].field);
    if (strcmp(key, "kernel") == 0) {
        if (strcmp(v, "reg") && strcmp(v, "local"))
            return 0;
        p->kernel = strcmp(v, "reg") == 0 ? CLG_GEMM_KERNEL_REG : CLG_GEMM_KERNEL_LOCAL;
        return 1;
    }
    if (strcmp(key, "small_flops") == 0) {
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !(x >= 0 && x < 1e15))
            return 0;
        p->small_flops = x;
        return 1;
    }
    for (int c = 0; c < CLG_GEMM_CLASSES; c++) {
        char name[32];
        snprintf(name, sizeof name, "backend.%s", clg__gemm_class_name((clg_gemm_class)c));
        if (strcmp(key, name) == 0)
            return parse_backend(v, &cb[c]);
    }
    return strcmp(key, "device") == 0; /* informational */
}

clg_status clg__gemm_tuning_parse(clg_ctx *ctx, const char *text, clg_gemm_params *p,
                                  clg_gemm_backend cb[CLG_GEMM_CLASSES])
{
    size_t len = strlen(text);
    if (strncmp(text, TUNING_MAGIC "\n", strlen(TUNING_MAGIC) + 1) != 0)
        return clg__fail(ctx, CLG_ERR_CORRUPT, "GEMM tuning: not a tuning file");
    char *copy = clg__malloc(len + 1);
    if (!copy)
        return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "GEMM tuning: out of memory");
    memcpy(copy, text, len + 1);
    clg_gemm_params q = *p;
    clg_gemm_backend qb[CLG_GEMM_CLASSES];
    memcpy(qb, cb, sizeof qb);
    clg_status st = CLG_OK;
    unsigned line_no = 1;
    char *save = NULL;
    strtok_r(copy, "\n", &save); /* the magic line */
    for (char *line = strtok_r(NULL, "\n", &save); line && st == CLG_OK;
         line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        if (line[0] != '#' && !parse_line(line, &q, qb))
            st = clg__fail(ctx, CLG_ERR_CORRUPT, "GEMM tuning: line %u is not valid", line_no);
    }
    free(copy);
    if (st == CLG_OK)
        st = clg__gemm_params_check(ctx, &q);
    if (st != CLG_OK)
        return st == CLG_ERR_INVALID_ARG ? CLG_ERR_CORRUPT : st;
    *p = q;
    memcpy(cb, qb, sizeof qb);
    return CLG_OK;
}

/* Reads the device's tuning file into s; silently keeps the defaults when there is none or
 * it is unusable (a stale or damaged tuning file must not stop anyone). */
static void load_tuning(clg_ctx *ctx, clg__gemm_state *s)
{
    char *path = clg__gemm_tuning_path(ctx);
    char *text = path ? clg__read_text_file(path, TUNING_MAX_BYTES) : NULL;
    free(path);
    if (!text)
        return;
    char saved[CLG__ERR_TEXT];
    memcpy(saved, ctx->last_error, sizeof saved);
    if (clg__gemm_tuning_parse(ctx, text, &s->params, s->class_backend) == CLG_OK)
        s->tuned = 1;
    memcpy(ctx->last_error, saved, sizeof saved); /* not an error the caller made */
    free(text);
}

/* CLGRAD_TUNE=quick (clg_ctx_options.tune): a device without a tuning file is searched once,
 * quickly, and the result stored for every later context. Program builds during the search
 * are not reported one by one; the search is, as family "tuning". A failed search keeps the
 * table's parameters and says nothing: the user's work goes on. */
static void tune_first_use(clg_ctx *ctx, clg__gemm_state *s)
{
    void (*on_build)(void *, const char *, double) = ctx->on_build;
    char saved[CLG__ERR_TEXT];
    memcpy(saved, ctx->last_error, sizeof saved);
    if (on_build)
        on_build(ctx->on_build_user, "tuning", 0.0);
    ctx->on_build = NULL;
    double t0 = clg__now();
    clg_gemm_params table = s->params, best;
    double score;
    if (clg_gemm_tune(ctx, NULL, &best, &score) == CLG_OK)
        (void)clg_gemm_save_tuning(ctx, &best, s->class_backend);
    else
        s->params = table;
    s->tuned = 1;
    ctx->on_build = on_build;
    if (on_build)
        on_build(ctx->on_build_user, "tuning", clg__now() - t0 + 1e-9);
    memcpy(ctx->last_error, saved, sizeof saved);
}

static void state_free(void *data)
{
    free(data);
}

clg_status clg__gemm_state_get(clg_ctx *ctx, clg__gemm_state **out)
{
    clg__ext *e = &ctx->ext[CLG__EXT_GEMM];
    if (!e->data) {
        clg__gemm_state *s = clg__calloc(1, sizeof *s);
        if (!s)
            return clg__fail(ctx, CLG_ERR_OUT_OF_HOST_MEMORY, "GEMM state: out of memory");
        clg_device_info as = ctx->device; /* the GPU profile: a GPU's row */
        as.type = ctx->gpu_profile ? CLG_DEVICE_GPU : as.type;
        s->params = clg_gemm_params_default(&as);
        for (int c = 0; c < CLG_GEMM_CLASSES; c++)
            s->class_backend[c] = CLG_GEMM_BUILTIN;
        s->backend = CLG_GEMM_AUTO;
        const char *env = getenv("CLGRAD_GEMM");
        if (env && strcasecmp(env, "builtin") == 0)
            s->backend = CLG_GEMM_BUILTIN;
        else if (env && strcasecmp(env, "clblast") == 0 && clg_gemm_has_clblast())
            s->backend = CLG_GEMM_CLBLAST;
        load_tuning(ctx, s);
        e->data = s;
        e->destroy = state_free;
        if (!s->tuned && ctx->tune_first_use && ctx->cache_dir)
            tune_first_use(ctx, s);
    }
    *out = e->data;
    return CLG_OK;
}

clg_status clg_gemm_set_backend(clg_ctx *ctx, clg_gemm_backend backend)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_gemm_set_backend: ctx is NULL");
    if ((unsigned)backend > CLG_GEMM_CLBLAST)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_gemm_set_backend: unknown backend %d", (int)backend);
    if (backend == CLG_GEMM_CLBLAST && !clg_gemm_has_clblast())
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "clg_gemm_set_backend: this clgrad was built without CLBlast");
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    if (st == CLG_OK)
        s->backend = backend;
    return st;
}

clg_status clg_gemm_get_backend(clg_ctx *ctx, clg_gemm_backend *out)
{
    if (!ctx || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_gemm_get_backend: NULL argument");
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    if (st == CLG_OK)
        *out = s->backend;
    return st;
}

clg_status clg_gemm_get_params(clg_ctx *ctx, clg_gemm_params *out)
{
    if (!ctx || !out)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_gemm_get_params: NULL argument");
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    if (st == CLG_OK)
        *out = s->params;
    return st;
}

clg_status clg_gemm_set_params(clg_ctx *ctx, const clg_gemm_params *p)
{
    if (!ctx || !p)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_gemm_set_params: NULL argument");
    clg_status st = clg__gemm_params_check(ctx, p);
    clg__gemm_state *s = NULL;
    if (st == CLG_OK)
        st = clg__gemm_state_get(ctx, &s);
    if (st == CLG_OK)
        s->params = *p;
    return st;
}

clg_status clg_gemm_save_tuning(clg_ctx *ctx, const clg_gemm_params *p,
                                const clg_gemm_backend per_class[CLG_GEMM_CLASSES])
{
    if (!ctx || !p || !per_class)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_gemm_save_tuning: NULL argument");
    clg_status st = clg__gemm_params_check(ctx, p);
    if (st != CLG_OK)
        return st;
    char text[1024];
    int used = snprintf(text, sizeof text,
                        TUNING_MAGIC "\ndevice %s\nkernel %s\nmr %u\nnr %u\nlocal_m %u\nlocal_n %u\nkc %u\n"
                        "pack_min_k %u\nstage_b %u\nts %u\nwpt %u\nsmall_flops %.0f\nconv_mr %u\n"
                        "conv_nr %u\n",
                        ctx->device.name, p->kernel == CLG_GEMM_KERNEL_REG ? "reg" : "local", p->mr,
                        p->nr, p->local_m, p->local_n, p->kc, p->pack_min_k, p->stage_b, p->ts, p->wpt,
                        p->small_flops, p->conv_mr, p->conv_nr);
    for (int c = 0; c < CLG_GEMM_CLASSES; c++) {
        if (per_class[c] != CLG_GEMM_BUILTIN && per_class[c] != CLG_GEMM_CLBLAST)
            return clg__fail(ctx, CLG_ERR_INVALID_ARG, "clg_gemm_save_tuning: per_class[%d] must be builtin or clblast", c);
        used += snprintf(text + used, sizeof text - (size_t)used, "backend.%s %s\n",
                         clg__gemm_class_name((clg_gemm_class)c),
                         per_class[c] == CLG_GEMM_CLBLAST ? "clblast" : "builtin");
    }
    char *path = clg__gemm_tuning_path(ctx);
    if (!path)
        return clg__fail(ctx, CLG_ERR_IO, "clg_gemm_save_tuning: the context has no cache folder");
    st = clg__file_write_atomic(ctx, path, text, strlen(text));
    free(path);
    return st;
}
