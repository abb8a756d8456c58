/* GEMM parameters: the default table by device type and vendor, per-device tuning files in the
 * cache folder, and the backend choice. */
#include <errno.h>
#include <stddef.h>
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

/* The local-memory tiles' fields in a CPU row: unused there, but valid. */
#define NO_TILE 64, 64, 16, 16, 16, 4, 2, 0

/* 8 x 32 blocks: 16 float16 accumulators of AVX-512's 32 registers; 8 row tiles per group
 * share each B panel in cache, K in blocks of 512, B in place for K < 64 (packing such a B
 * costs more than it saves); below 2^17 flops launch overhead dominates and the
 * one-element-per-item kernel wins. */
#define POCL_AVX512_ROW(stage_b, pack_a_min_n, thin_nr, pf_panel)                               \
    {sizeof(clg_gemm_params), CLG_GEMM_KERNEL_REG, 8, 32, 8, 1, 512, 64, stage_b, NO_TILE, 131072.0, 0, 0, pack_a_min_n, thin_nr, pf_panel}
#define POCL_AVX512 POCL_AVX512_ROW(2, 0, 16, 0)
/* The same on Intel's cores with two FMA ports: A packed into panels where n >= 512 (an
 * Intel Xeon VM, family 6 model 167 as KVM reports it, 2 cores, 259 GFLOP/s FMA peak; paired
 * runs in one process, two rounds: 1024^3 1.08/1.21x, 2048^3 1.11/1.10x, 64 x 1024 x 3136
 * 1.11/1.12x, 64 x 12544 x 800 1.06/1.05x, 256^3 0.91/1.04x). clgrad-tune all kept the rest
 * of the row there (its paired runs: nothing else above 1.03x twice). Rows of B a multiple
 * of 1 KiB apart alias (stage_b 3; family 6 model 207, 2 cores, paired runs): 64 x 12544 x
 * 800 staged 1.6-2.1x, 512^3 packed 1.2-1.4x. Thin products keep 8 x 32 blocks: 8 x 16's
 * eight accumulators do not cover two ports' FMA latency (same VM, batch 32, alternating
 * runs of one-layer networks: 576 -> 96 channels on 14x14 4.8-9.9 -> 3.8-6.1 ms, 16 -> 96 on
 * 112x112 21-25 -> 13-19, 320 -> 1280 on 7x7, images side by side, 9.4-15 -> 7.1-12;
 * MobileNet-v2 inference 1.05-1.16x, median 1.11x of 6 rounds). A packed B panel
 * prefetched 32 steps ahead (4 KiB): the product's loop waited on L2 for every second
 * vector of B (perf annotate); same VM, clgrad-bench gemm against OpenBLAS (Cooperlake) in one
 * run: sq512 0.93 -> 0.98, sq1024 0.90 -> 0.98, sq2048 0.88 -> 0.97 (377 -> 413 GFLOP/s);
 * 8 steps ahead gained nothing, 64 and 128 a little less. Not measured on AMD's rows. */
#define POCL_AVX512_INTEL POCL_AVX512_ROW(3, 512, 32, 32)
/* Intel's runtime: 6 x 32 blocks, 16 x 2 groups, K in blocks of 128. */
#define INTEL_AVX512 {sizeof(clg_gemm_params), CLG_GEMM_KERNEL_REG, 6, 32, 16, 2, 128, 1, 2, NO_TILE, 131072.0, 0, 0, 0, 16, 0}

/* GPUs: clg_gemm_tile (cl_kernels/gemm_tile.cl) with mwg, nwg, kwg, mdimc, ndimc, vw, kwi, db.
 * Not measured here (no GPU on the development machines): starting points taken from what
 * CLBlast's tuning database holds for its Xgemm kernel of the same design on each vendor's
 * GPUs (its M is our n: it stores C column-major), for clgrad-tune to refine on the device. */
#define GPU_ROW(tile) {sizeof(clg_gemm_params), CLG_GEMM_KERNEL_LOCAL, 8, 32, 8, 1, 256, 128, 0, tile, 65536.0, 0, 0, 0, 16, 0}
/* NVIDIA Maxwell to Pascal (SM 5.2-6.1 rows): 64 x 128 tiles, 16 x 8 items of 8 x 8 */
#define NVIDIA_TILE 128, 64, 16, 16, 8, 4, 2, 0
/* AMD GCN and Intel Gen defaults: 64 x 64 tiles, 16 x 8 items (4 x 8), k steps of 32 */
#define AMD_TILE 64, 64, 32, 16, 8, 4, 2, 0
#define INTEL_GPU_TILE 64, 64, 32, 16, 8, 4, 2, 0
/* Any other device: CLBlast's own default (32 x 64, 16 x 8 items). */
#define ANY_GPU_TILE 32, 64, 32, 8, 16, 2, 2, 0

static const default_row default_table[] = {
    {CLG_DEVICE_GPU, "NVIDIA", CLG_CPU_CLASS_NONE, GPU_ROW(NVIDIA_TILE)},
    {CLG_DEVICE_GPU, "Advanced Micro Devices", CLG_CPU_CLASS_NONE, GPU_ROW(AMD_TILE)},
    {CLG_DEVICE_GPU, "Intel", CLG_CPU_CLASS_NONE, GPU_ROW(INTEL_GPU_TILE)},
    {CLG_DEVICE_GPU, NULL, CLG_CPU_CLASS_NONE, GPU_ROW(ANY_GPU_TILE)},
    {CLG_DEVICE_ACCELERATOR, NULL, CLG_CPU_CLASS_NONE, GPU_ROW(ANY_GPU_TILE)},
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
     * runs; 387 GFLOP/s at 2048^3, 1.4-2.0x OpenBLAS 0.3.21 on every benchmark shape. On
     * an Intel Xeon (POCL's vendor "GenuineIntel") the same blocks with A packed: above. */
    {CLG_DEVICE_CPU, "GenuineIntel", CLG_CPU_CLASS_AVX512_2FMA, POCL_AVX512_INTEL},
    {CLG_DEVICE_CPU, NULL, CLG_CPU_CLASS_AVX512_2FMA, POCL_AVX512},
    /* POCL, AVX2: measured with clgrad-tune all on an AMD EPYC VM (Zen 3, family 25 model 1,
     * 2 cores; 16 registers of 8 floats, so a float16 accumulator is two): 4 x 16 GEMM blocks
     * (1.46x the 6 x 32 this row held, unmeasured, in paired runs; 100 GFLOP/s at 1024^3),
     * 6 x 32 for the convolutions (1.07x over 4 x 32). Tuned again with the kernel's prefetches
     * (same VM class): groups of 8 x 2 tiles and B in place below k = 64 (1.04x each, paired). */
    {CLG_DEVICE_CPU, NULL, CLG_CPU_CLASS_AVX2, {sizeof(clg_gemm_params), CLG_GEMM_KERNEL_REG, 4,
                                                16, 8, 2, 256, 64, 2, NO_TILE, 131072.0, 6, 32,
                                                0, 16, 0}},
    /* Anything else: small blocks. */
    {(clg_device_type)0, NULL, CLG_CPU_CLASS_NONE, {sizeof(clg_gemm_params), CLG_GEMM_KERNEL_REG,
                                                    4, 16, 8, 1, 256, 1, 2, NO_TILE, 131072.0,
                                                    0, 0, 0, 16, 0}},
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

static int is_pow2_upto(unsigned v, unsigned most)
{
    return v >= 1 && v <= most && (v & (v - 1)) == 0;
}

clg_status clg__gemm_params_check(clg_ctx *ctx, const clg_gemm_params *p)
{
    const char *bad = NULL;
    if (p->struct_size != sizeof *p)
        bad = "struct_size is not this library's: start from clg_gemm_params_default() or "
              "clg_gemm_get_params()";
    else if (p->kernel != CLG_GEMM_KERNEL_REG && p->kernel != CLG_GEMM_KERNEL_LOCAL)
        bad = "kernel must be CLG_GEMM_KERNEL_REG or CLG_GEMM_KERNEL_LOCAL";
    else if (p->mr < 1 || p->mr > 16)
        bad = "mr must be 1..16";
    else if (p->nr < 16 || p->nr > 64 || p->nr % 16)
        bad = "nr must be 16, 32, 48 or 64";
    else if (p->conv_mr > 16)
        bad = "conv_mr must be 0 (mr) or 1..16";
    else if (p->conv_nr != 0 && p->conv_nr != 16 && p->conv_nr != 32)
        bad = "conv_nr must be 0 (nr), 16 or 32";
    else if (p->thin_nr != 16 && p->thin_nr != 32)
        bad = "thin_nr must be 16 or 32";
    else if (p->pf_panel > 256)
        bad = "pf_panel must be 0..256";
    else if (p->local_m < 1 || p->local_m > 64)
        bad = "local_m must be 1..64";
    else if (p->local_n < 1 || p->local_n > 64 || p->local_m * p->local_n > 256)
        bad = "local_n must be 1..64, with local_m * local_n <= 256";
    else if (p->kc < 16 || p->kc > 4096)
        bad = "kc must be 16..4096";
    else if (p->stage_b > 3)
        bad = "stage_b must be 0, 1, 2 or 3";
    else if (p->stage_b && (size_t)p->kc * p->nr * sizeof(float) > ctx->device.local_mem_bytes)
        bad = "stage_b: kc * nr floats exceed the device's local memory";
    else if (p->mwg < 8 || p->mwg > 256 || p->nwg < 8 || p->nwg > 256)
        bad = "mwg and nwg must be 8..256";
    else if (p->mdimc < 1 || p->ndimc < 1 || p->mwg % p->mdimc || p->nwg % p->ndimc ||
             p->mwg / p->mdimc > 16 || p->nwg / p->ndimc > 16)
        bad = "mdimc and ndimc must divide mwg and nwg, with at most 16 results each way";
    else if ((size_t)p->mdimc * p->ndimc > ctx->device.max_work_group_size)
        bad = "mdimc * ndimc exceeds the device's work-group size";
    else if (p->kwg < 4 || p->kwg > 64)
        bad = "kwg must be 4..64";
    else if (!is_pow2_upto(p->vw, 8) || p->mwg % p->vw || p->nwg % p->vw || p->kwg % p->vw)
        bad = "vw must be 1, 2, 4 or 8 and divide mwg, nwg and kwg";
    else if (!is_pow2_upto(p->kwi, 8) || p->kwg % p->kwi)
        bad = "kwi must be 1, 2, 4 or 8 and divide kwg";
    else if (p->db > 1)
        bad = "db must be 0 or 1";
    else if (p->kernel == CLG_GEMM_KERNEL_LOCAL &&
             (p->db + 1u) * ((size_t)p->kwg + 1) * (p->mwg + p->nwg + 2) * sizeof(float) >
                 ctx->device.local_mem_bytes)
        bad = "the tiles (mwg + nwg) x kwg, twice with db, exceed the device's local memory";
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

static int parse_uint(const char *v, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || end == v || *end || x > 1000000 || *v == '-')
        return 0;
    *out = (unsigned)x;
    return 1;
}

/* The unsigned fields by name, in the order tuning files list them. */
typedef struct uint_field {
    const char *name;
    size_t offset;
} uint_field;
#define FIELD(f) {#f, offsetof(clg_gemm_params, f)}
static const uint_field uint_fields[] = {
    FIELD(mr), FIELD(nr), FIELD(local_m), FIELD(local_n), FIELD(kc), FIELD(pack_min_k),
    FIELD(stage_b), FIELD(mwg), FIELD(nwg), FIELD(kwg), FIELD(mdimc), FIELD(ndimc), FIELD(vw),
    FIELD(kwi), FIELD(db), FIELD(conv_mr), FIELD(conv_nr), FIELD(pack_a_min_n), FIELD(thin_nr),
    FIELD(pf_panel),
};
#undef FIELD

clg_status clg_gemm_params_set_field(clg_gemm_params *p, const char *key, const char *v)
{
    if (!p || !key || !v)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_gemm_params_set_field: NULL argument");
    for (size_t i = 0; i < sizeof uint_fields / sizeof uint_fields[0]; i++)
        if (strcmp(key, uint_fields[i].name) == 0) {
            if (parse_uint(v, (unsigned *)((char *)p + uint_fields[i].offset)))
                return CLG_OK;
            return clg__fail(NULL, CLG_ERR_INVALID_ARG, "GEMM parameter %s: \"%s\" is not a "
                             "number from 0 to 1000000", key, v);
        }
    if (strcmp(key, "kernel") == 0) {
        if (strcmp(v, "reg") == 0 || strcmp(v, "local") == 0) {
            p->kernel = strcmp(v, "reg") == 0 ? CLG_GEMM_KERNEL_REG : CLG_GEMM_KERNEL_LOCAL;
            return CLG_OK;
        }
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "GEMM parameter kernel: \"%s\" is not reg or local", v);
    }
    if (strcmp(key, "small_flops") == 0) {
        char *end;
        double x = strtod(v, &end);
        if (end != v && !*end && x >= 0 && x < 1e15) {
            p->small_flops = x;
            return CLG_OK;
        }
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "GEMM parameter small_flops: \"%s\" is not a "
                         "number from 0 to 1e15", v);
    }
    return clg__fail(NULL, CLG_ERR_INVALID_ARG, "unknown GEMM parameter \"%s\"", key);
}

int clg_gemm_params_print(const clg_gemm_params *p, const char *kv_sep, const char *item_sep,
                          char *out, size_t size)
{
    if (!p || !kv_sep || !item_sep || (!out && size))
        return -1;
    size_t used = 0;
    int n = snprintf(out, size, "kernel%s%s%s", kv_sep,
                     p->kernel == CLG_GEMM_KERNEL_REG ? "reg" : "local", item_sep);
    for (size_t i = 0; n >= 0 && i <= sizeof uint_fields / sizeof uint_fields[0]; i++) {
        used += (size_t)n;
        char *at = used < size ? out + used : NULL;
        size_t room = used < size ? size - used : 0;
        if (i < sizeof uint_fields / sizeof uint_fields[0])
            n = snprintf(at, room, "%s%s%u%s", uint_fields[i].name, kv_sep,
                         *(const unsigned *)((const char *)p + uint_fields[i].offset), item_sep);
        else
            n = snprintf(at, room, "small_flops%s%.0f%s", kv_sep, p->small_flops, item_sep);
    }
    return n < 0 ? -1 : (int)(used + (size_t)n);
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

/* One "key value" line; returns 0 for an unknown key or a bad value. */
static int parse_line(char *line, clg_gemm_params *p, clg_gemm_backend cb[CLG_GEMM_CLASSES])
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return 0;
    *sp = '\0';
    const char *key = line, *v = sp + 1;
    for (int c = 0; c < CLG_GEMM_CLASSES; c++) {
        char name[32];
        snprintf(name, sizeof name, "backend.%s", clg__gemm_class_name((clg_gemm_class)c));
        if (strcmp(key, name) == 0)
            return parse_backend(v, &cb[c]);
    }
    /* device: informational; ts, wpt: the GPU kernel of files written before clg_gemm_tile */
    if (strcmp(key, "device") == 0 || strcmp(key, "ts") == 0 || strcmp(key, "wpt") == 0)
        return 1;
    return clg_gemm_params_set_field(p, key, v) == CLG_OK;
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
static void tune_quick(clg_ctx *ctx, clg__gemm_state *s)
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
        const char *env = ctx->env.gemm;
        if (strcasecmp(env, "builtin") == 0)
            s->backend = CLG_GEMM_BUILTIN;
        else if (strcasecmp(env, "clblast") == 0 && clg_gemm_has_clblast())
            s->backend = CLG_GEMM_CLBLAST;
        load_tuning(ctx, s);
        e->data = s;
        e->destroy = state_free;
    }
    *out = e->data;
    return CLG_OK;
}

clg_status clg_gemm_tune_if_wanted(clg_ctx *ctx)
{
    if (!ctx)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_gemm_tune_if_wanted: ctx is NULL");
    clg__gemm_state *s = NULL;
    clg_status st = clg__gemm_state_get(ctx, &s);
    if (st == CLG_OK && !s->tuned && ctx->tune_asked && ctx->cache_dir)
        tune_quick(ctx, s);
    return st;
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
    char text[4096]; /* a device name (at most 256 bytes) and about 30 short lines */
    int used = snprintf(text, sizeof text, TUNING_MAGIC "\ndevice %s\n", ctx->device.name);
    used += clg_gemm_params_print(p, " ", "\n", text + used, sizeof text - (size_t)used);
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
