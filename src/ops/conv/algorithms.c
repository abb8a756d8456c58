/* The table of convolution algorithms: for each, in each form (one for every device, or a
 * CPU form and a GPU form as rows of their own), where it applies, the scratch it needs, its
 * passes, what it fuses and the programs it builds. The chooser (choose.c), the runner
 * (conv.c) and the warm-up read the rows of a context's form; adding an algorithm is one
 * entry and its file. */
#include <string.h>
#include <strings.h>
#include "ops/conv/winograd_internal.h"
#include "runtime/runtime_internal.h"

/* The forward epilogue (bias and ReLU): Winograd's output transform, the GPU tiles'. */
static int forward_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass)
{
    (void)ctx, (void)g;
    return pass == CLG_CONV_FWD;
}

/* The shifted form's scratch where it applies; the direct and first-layer kernels need none,
 * nor the GPU form
 * (its weight-gradient slices adapt to the limit). */
static void implicit_bytes(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                           size_t *fixed, size_t *per_image)
{
    if (clg__conv_implicit_applies(g) && !clg__conv_stem_applies(g, pass))
        clg__conv_implicit_bytes(ctx, g, pass, fixed, per_image);
}

static clg_status program(clg_ctx *ctx, const char *family, const char *options)
{
    cl_program prog;
    return clg__program_get(ctx, family, options, &prog);
}

static clg_status im2col_warm_up(clg_ctx *ctx)
{
    return program(ctx, "conv", NULL);
}

static clg_status implicit_warm_up(clg_ctx *ctx)
{
    char opts[48];
    clg_status st = clg__conv_implicit_options(ctx, opts, sizeof opts);
    if (st == CLG_OK)
        st = program(ctx, "conv_shift", opts);
    if (st == CLG_OK)
        st = clg__conv_stem_warm_up(ctx);
    return st == CLG_OK ? program(ctx, "conv", CLG__CONV_DIRECT_OPTIONS) : st;
}

/* The 3x3 and 5x5 programs of a form (the CPU form's products 16 and 32 channels wide). */
static clg_status winograd_warm_up(clg_ctx *ctx, int gpu)
{
    char opts[64];
    clg_status st = CLG_OK;
    for (size_t r = 3; r <= 5 && st == CLG_OK; r += 2)
        for (unsigned nr = 16; nr <= (gpu ? 16u : 32u) && st == CLG_OK; nr += 16) {
            if (gpu)
                clg__conv_winograd_gpu_options(r, opts, sizeof opts);
            else
                st = clg__conv_winograd_options(ctx, r, nr, opts, sizeof opts);
            if (st == CLG_OK)
                st = program(ctx, gpu ? "winograd_gpu" : "winograd", opts);
        }
    return st;
}

static clg_status winograd_cpu_warm_up(clg_ctx *ctx)
{
    return winograd_warm_up(ctx, 0);
}

static clg_status winograd_gpu_warm_up(clg_ctx *ctx)
{
    return winograd_warm_up(ctx, 1);
}

#define WINOGRAD_NEEDS "a 3x3 or 5x5 kernel, stride 1 and dilation 1"
#define DEPTHWISE_NEEDS "one filter per channel (groups = channels in = channels out)"

static const clg__conv_algo_def table[] = {
    {CLG_CONV_ALGO_IM2COL, CLG__CONV_ANY, NULL, NULL, clg__conv_im2col_bytes, 0,
     clg__conv_im2col_run, clg__conv_gemm1x1_fuses, im2col_warm_up, 1}, /* as GEMM's */
    /* CPUs: shifted-row products (direct kernels where their scratch does not fit) */
    {CLG_CONV_ALGO_IMPLICIT, CLG__CONV_CPU, NULL, NULL, implicit_bytes, 1,
     clg__conv_implicit_run, clg__conv_implicit_fuses, implicit_warm_up, 0},
    /* GPUs: implicit GEMM on local-memory tiles */
    {CLG_CONV_ALGO_IMPLICIT, CLG__CONV_GPU, NULL, NULL, NULL, 1, clg__conv_tile_run,
     forward_fuses, clg__conv_tile_warm_up, 0},
    {CLG_CONV_ALGO_WINOGRAD, CLG__CONV_CPU, WINOGRAD_NEEDS, clg__conv_winograd_applies,
     clg__conv_winograd_bytes, 0, clg__conv_winograd_run, forward_fuses, winograd_cpu_warm_up, 0},
    {CLG_CONV_ALGO_WINOGRAD, CLG__CONV_GPU, WINOGRAD_NEEDS, clg__conv_winograd_applies,
     clg__conv_winograd_gpu_bytes, 0, clg__conv_winograd_gpu_run, forward_fuses,
     winograd_gpu_warm_up, 0},
    {CLG_CONV_ALGO_GEMM, CLG__CONV_ANY, "a 1x1 kernel, stride 1 and no padding",
     clg__conv_gemm1x1_applies, NULL, 0, clg__conv_gemm1x1_run, clg__conv_gemm1x1_fuses,
     NULL, 1}, /* its GEMMs are warmed up with GEMM's; the sum in the products' stores */
    /* CPUs: stride 1 by rows of vectors; GPUs: a work-item per value */
    {CLG_CONV_ALGO_DEPTHWISE, CLG__CONV_CPU, DEPTHWISE_NEEDS, clg__conv_depthwise_applies, NULL,
     0, clg__conv_depthwise_cpu_run, clg__conv_depthwise_fuses, clg__conv_depthwise_warm_up, 0},
    {CLG_CONV_ALGO_DEPTHWISE, CLG__CONV_GPU, DEPTHWISE_NEEDS, clg__conv_depthwise_applies, NULL,
     0, clg__conv_depthwise_run, clg__conv_depthwise_fuses, clg__conv_depthwise_warm_up, 0},
};
#define ALGOS (sizeof table / sizeof table[0])

static const char *const families[] = {"conv", "conv_shift", "winograd", "winograd_gpu",
                                       "conv_dw", "conv_stem"};

static int serves(const clg_ctx *ctx, const clg__conv_algo_def *d)
{
    return d->form == CLG__CONV_ANY ||
           d->form == (clg_ctx_decides_as_gpu(ctx) ? CLG__CONV_GPU : CLG__CONV_CPU);
}

const clg__conv_algo_def *clg__conv_algo_def_for(const clg_ctx *ctx, clg_conv_algo algo)
{
    for (size_t i = 0; i < ALGOS; i++)
        if (table[i].algo == algo && serves(ctx, &table[i]))
            return &table[i];
    return NULL;
}

int clg__conv_algo_concrete(int algo)
{
    return (algo >= CLG_CONV_ALGO_IM2COL && algo <= CLG_CONV_ALGO_GEMM) ||
           algo == CLG_CONV_ALGO_DEPTHWISE;
}

const char *clg_conv_algo_name(clg_conv_algo algo)
{
    switch (algo) {
    case CLG_CONV_ALGO_AUTO: return "auto";
    case CLG_CONV_ALGO_IM2COL: return "im2col";
    case CLG_CONV_ALGO_IMPLICIT: return "implicit";
    case CLG_CONV_ALGO_WINOGRAD: return "winograd";
    case CLG_CONV_ALGO_GEMM: return "gemm";
    case CLG_CONV_ALGO_FIND: return "find";
    case CLG_CONV_ALGO_DEPTHWISE: return "depthwise";
    }
    return "unknown";
}

clg_conv_algo clg__conv_algo_named(const char *name)
{
    for (int a = CLG_CONV_ALGO_AUTO; a <= CLG_CONV_ALGO_DEPTHWISE; a++)
        if (strcasecmp(name, clg_conv_algo_name((clg_conv_algo)a)) == 0)
            return (clg_conv_algo)a;
    return (clg_conv_algo)-1;
}

clg_status clg__conv_algo_fits(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                               clg_conv_algo algo, size_t *min_bytes, size_t *max_bytes)
{
    const clg__conv_algo_def *a = clg__conv_algo_def_for(ctx, algo);
    if (!a)
        return clg__fail(ctx, CLG_ERR_INVALID_ARG, "conv2d: %s is not a concrete algorithm",
                         clg_conv_algo_name(algo));
    if (a->applies && !a->applies(g))
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED, "conv2d: %s needs %s",
                         clg_conv_algo_name(algo), a->needs);
    size_t fixed = 0, per_image = 0;
    if (a->bytes)
        a->bytes(ctx, g, pass, &fixed, &per_image);
    *min_bytes = a->scratch_optional ? 0 : fixed + per_image;
    *max_bytes = fixed + per_image * g->N;
    if (*min_bytes > g->workspace_limit)
        return clg__fail(ctx, CLG_ERR_UNSUPPORTED,
                         "conv2d: %s needs %zu bytes of workspace, the limit is %zu",
                         clg_conv_algo_name(algo), *min_bytes, g->workspace_limit);
    return CLG_OK;
}

clg_status clg__conv_run(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                         clg_conv_algo algo, const clg_tensor *a, const clg_tensor *b,
                         clg_tensor *out)
{
    const clg__conv_algo_def *def = clg__conv_algo_def_for(ctx, algo);
    if (!def)
        return clg__fail(ctx, CLG_ERR_INTERNAL, "conv2d: no algorithm %d", (int)algo);
    return def->run(ctx, g, pass, a, b, out);
}

int clg__conv_fuses(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_pass pass,
                    clg_conv_algo algo)
{
    const clg__conv_algo_def *def = clg__conv_algo_def_for(ctx, algo);
    return def && def->fuses && def->fuses(ctx, g, pass);
}

int clg__conv_fuses_sum(clg_ctx *ctx, const clg__conv_geom *g, clg_conv_algo algo)
{
    const clg__conv_algo_def *def = clg__conv_algo_def_for(ctx, algo);
    return def && def->fuses_sum && clg__conv_fuses(ctx, g, CLG_CONV_FWD, algo);
}

int clg__conv_family(const char *family)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(family, families[i]) == 0)
            return 1;
    return 0;
}

clg_status clg__conv_warm_up(clg_ctx *ctx)
{
    clg_status st = CLG_OK;
    for (size_t i = 0; i < ALGOS && st == CLG_OK; i++)
        if (table[i].warm_up && serves(ctx, &table[i]))
            st = table[i].warm_up(ctx);
    return st;
}
