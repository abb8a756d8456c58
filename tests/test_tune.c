/* CPU classes from what OpenCL reports, and the tuner: its search on a model score (found
 * peaks, rejected candidates, options), real scores that check results first, and tuning on
 * first use (CLGRAD_TUNE=quick) stored for the next context. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"

static clg_device_info cpu(const char *vendor, const char *name, unsigned preferred, unsigned native)
{
    clg_device_info d;
    memset(&d, 0, sizeof d);
    d.type = CLG_DEVICE_CPU;
    snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.vec_width_float = preferred;
    d.native_vec_width_float = native;
    return d;
}

static clg_cpu_class class_of(clg_device_info d)
{
    clg_cpu_class c = (clg_cpu_class)-1;
    CLG_ASSERT_STATUS(clg_device_cpu_class(&d, &c), CLG_OK);
    return c;
}

static void cpu_classes_from_what_opencl_reports(void **state)
{
    (void)state;
    unsetenv("CLGRAD_CPU_CLASS");
    /* POCL: "pthread-<LLVM target>-<brand>", the vendor from CPUID */
    /* AMD: Zen 4 (EPYC 9xx4, Ryzen 7000) one 512-bit FMA a cycle, Zen 5 (9xx5, 9000) two */
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-znver4-AMD EPYC 9654 96-Core Processor", 16, 16)),
                     CLG_CPU_CLASS_AVX512_1FMA);
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-skylake-avx512-AMD EPYC 9555 64-Core Processor", 16, 16)),
                     CLG_CPU_CLASS_AVX512_2FMA);
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-znver4-AMD Ryzen 9 7950X", 16, 16)),
                     CLG_CPU_CLASS_AVX512_1FMA);
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-znver4-AMD Ryzen 7 9700X", 16, 16)),
                     CLG_CPU_CLASS_AVX512_2FMA);
    /* a VM that hides the model: Zen 5's flag avx512_vp2intersect on this host decides */
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int zen5 = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            zen5 = strstr(line, " avx512_vp2intersect") != NULL;
            break;
        }
    if (f)
        fclose(f);
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-skylake-avx512-AMD EPYC", 16, 16)),
                     zen5 ? CLG_CPU_CLASS_AVX512_2FMA : CLG_CPU_CLASS_AVX512_1FMA);
    assert_int_equal(class_of(cpu("GenuineIntel", "pthread-skylake-avx512-Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", 16, 16)),
                     CLG_CPU_CLASS_AVX512_2FMA);
    assert_int_equal(class_of(cpu("GenuineIntel", "pthread-skylake-avx512-Intel(R) Xeon(R) Silver 4214 CPU", 16, 16)),
                     CLG_CPU_CLASS_AVX512_1FMA);
    assert_int_equal(class_of(cpu("GenuineIntel", "pthread-haswell-Intel(R) Xeon(R) CPU E5-2690 v3", 8, 8)),
                     CLG_CPU_CLASS_AVX2);
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-znver2-AMD EPYC 7742", 8, 8)), CLG_CPU_CLASS_AVX2);
    assert_int_equal(class_of(cpu("ARM", "pthread-cortex-a72", 4, 4)), CLG_CPU_CLASS_GENERIC);
    /* Intel's runtime: its own vendor, the brand as the name, preferred width 1 */
    assert_int_equal(class_of(cpu("Intel(R) Corporation", "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 1, 16)),
                     CLG_CPU_CLASS_AVX512_2FMA);
    assert_int_equal(class_of(cpu("Intel(R) Corporation", "AMD EPYC 9B14", 1, 16)), CLG_CPU_CLASS_AVX512_1FMA);
    assert_int_equal(class_of(cpu("Intel(R) Corporation", "AMD EPYC 9B45", 1, 16)), CLG_CPU_CLASS_AVX512_2FMA);
    clg_device_info gpu = cpu("NVIDIA Corporation", "NVIDIA H200", 1, 1);
    gpu.type = CLG_DEVICE_GPU;
    assert_int_equal(class_of(gpu), CLG_CPU_CLASS_NONE);

    /* each class has its row: AVX2's 4 x 16 blocks with 6 x 32 for convolutions, the generic
       4 x 16 for both */
    clg_device_info avx2 = cpu("GenuineIntel", "pthread-haswell-Intel(R) Core(TM) i7-4770", 8, 8);
    assert_int_equal(clg_gemm_params_default(&avx2).conv_nr, 32);
    clg_device_info narrow = cpu("ARM", "pthread-cortex-a72", 4, 4);
    assert_int_equal(clg_gemm_params_default(&narrow).nr, 16);

    /* the override, for CPUs only; a wrong one is refused by name, here and by contexts */
    setenv("CLGRAD_CPU_CLASS", "AVX2", 1);
    assert_int_equal(class_of(cpu("AuthenticAMD", "pthread-skylake-avx512-AMD EPYC", 16, 16)), CLG_CPU_CLASS_AVX2);
    assert_int_equal(class_of(gpu), CLG_CPU_CLASS_NONE);
    clg_device_info amd = cpu("AuthenticAMD", "pthread-skylake-avx512-AMD EPYC", 16, 16);
    assert_int_equal(clg_gemm_params_default(&amd).mr, 4); /* the AVX2 row */
    setenv("CLGRAD_CPU_CLASS", "avx1024", 1);
    clg_cpu_class c;
    CLG_ASSERT_STATUS(clg_device_cpu_class(&amd, &c), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "avx512-2fma"));
    assert_int_equal(c, zen5 ? CLG_CPU_CLASS_AVX512_2FMA : CLG_CPU_CLASS_AVX512_1FMA); /* detected */
    clg_ctx *ctx = NULL;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), NULL, &ctx), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "CLGRAD_CPU_CLASS=avx1024"));
    unsetenv("CLGRAD_CPU_CLASS");
    for (int i = CLG_CPU_CLASS_GENERIC; i <= CLG_CPU_CLASS_AVX512_2FMA; i++) {
        CLG_ASSERT_STATUS(clg_cpu_class_parse(clg_cpu_class_name((clg_cpu_class)i), &c), CLG_OK);
        assert_int_equal(c, i);
    }
    CLG_ASSERT_STATUS(clg_cpu_class_parse("none", &c), CLG_ERR_INVALID_ARG);
}

/* A model score with one peak, and a candidate that "crashes". */
typedef struct model {
    int evaluations, reported, rejected, compared, refused, again, unconfirmed;
    unsigned crash_mr;
    unsigned lucky_mr;   /* 3x too fast in its first paired run, as in a noisy machine */
    unsigned unlucky_mr; /* 3x too slow alone, as in a slow phase */
    clg_gemm_params last; /* the last set compared: a second run in a row is the confirmation */
    double (*value)(const clg_gemm_params *p); /* the true score; NULL: model_value */
    int tile_crash; /* 32-wide work-groups "crash the compiler" (the GPU model) */
} model;

static int model_crashes(const model *m, const clg_gemm_params *p)
{
    return m->tile_crash ? p->mdimc == 32 || p->ndimc == 32 : p->mr == m->crash_mr;
}

/* separable, every step worth more than the search's 2% noise margin; the peak is a
 * register-blocked set (the GPU profile's rows, local-memory tiles, score low) */
static double model_value(const clg_gemm_params *p)
{
    if (p->kernel == CLG_GEMM_KERNEL_LOCAL)
        return 10.0;
    return 100.0 - 3.0 * fabs((double)p->mr - 8) - 0.3 * fabs((double)p->nr - 48) -
           5.0 * fabs(log2((double)p->kc / 256.0)) - 4.0 * fabs(log2((double)p->local_m / 4.0)) -
           5.0 * (p->stage_b != 2) - (p->conv_mr ? 3.0 * fabs((double)p->conv_mr - 6) : 30.0);
}

static double model_score(void *user, const clg_gemm_params *p, char *why, size_t why_size)
{
    model *m = user;
    m->evaluations++;
    if (model_crashes(m, p)) {
        snprintf(why, why_size, "simulated crash");
        return 0;
    }
    double (*value)(const clg_gemm_params *) = m->value ? m->value : model_value;
    return value(p) * (p->mr == m->unlucky_mr ? 1.0 / 3.0 : 1.0);
}

/* paired runs see through the luck */
static double model_compare(void *user, const clg_gemm_params *p, const clg_gemm_params *best,
                            char *why, size_t why_size)
{
    model *m = user;
    int again = m->compared++ > 0 && memcmp(&m->last, p, sizeof *p) == 0;
    m->last = *p;
    m->again += again;
    if (model_crashes(m, p)) {
        snprintf(why, why_size, "simulated crash");
        return 0;
    }
    double (*value)(const clg_gemm_params *) = m->value ? m->value : model_value;
    return value(p) / value(best) * (p->mr == m->lucky_mr && !again ? 3.0 : 1.0);
}

static void model_compared(void *user, const clg_gemm_params *p, double ratio, const char *why)
{
    model *m = user;
    if (p->mr == m->lucky_mr && strcmp(why, "again") == 0 && ratio <= 1.02)
        m->unconfirmed++;
}

static double reject_all(void *user, const clg_gemm_params *p, char *why, size_t why_size)
{
    (void)user, (void)p;
    snprintf(why, why_size, "driver said no");
    return 0;
}

static void model_report(void *user, const clg_gemm_params *p, double score, const char *why)
{
    model *m = user;
    (void)p;
    m->reported++;
    if (score == 0 && strcmp(why, "simulated crash") == 0)
        m->rejected++;
    else if (score == 0) { /* refused before it runs: beyond this device (its local memory) */
        assert_non_null(strstr(why, "GEMM parameters: "));
        m->refused++;
    }
}

static void search_finds_the_peak_and_survives_rejections(void **state)
{
    (void)state;
    clg_ctx *ctx = clg_test_ctx("off");
    clg_gemm_params start = clg_gemm_params_default(clg_ctx_device(ctx)), best;
    start.kernel = CLG_GEMM_KERNEL_REG, start.mr = 4, start.nr = 16, start.kc = 1024;
    start.local_m = 1, start.stage_b = 0, start.conv_mr = 0, start.conv_nr = 0;
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &start), CLG_OK);
    model m = {.crash_mr = 12};
    clg_tune_options o = clg_tune_options_default();
    o.evaluate = model_score;
    o.compare = model_compare;
    o.on_candidate = model_report;
    o.user = &m;
    double score = 0;

    /* quick: better than the start, within one step of it in each parameter */
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_OK);
    assert_true(score > model_score(&m, &start, (char[64]){0}, 64));
    /* every candidate reported: the start scored alone (three times, a median, and once
     * more by us above), every other one paired against the best (wins twice) or refused by
     * the check */
    assert_int_equal(m.evaluations, 4);
    assert_int_equal(m.reported, 1 + m.compared - m.again + m.refused);
    assert_true(m.again >= 1);
    assert_true(m.compared >= 1);
    assert_true(m.compared < 40);
    clg_gemm_params now;
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &now), CLG_OK);
    assert_int_equal(now.mr, best.mr); /* left in the context */

    /* quick, without the table's rows, from the poor start: its line searches alone reach
     * within 5% of the peak's score (the rows' blocks; 4 x 16 to 8 x 48, K in 1024s to 256s,
     * groups of 1 to 4, stage_b by trying each), in one quick search's few candidates. On an
     * AVX-512 class: the peak's 24 accumulators are out of an AVX2 search's reach (below), and
     * the machine running the suite may be either */
    setenv("CLGRAD_CPU_CLASS", "avx512-2fma", 1);
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &start), CLG_OK);
    m = (model){.crash_mr = 12};
    o.table_rows = 0;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_OK);
    o.table_rows = 1;
    clg_gemm_params peak = best;
    peak.mr = 8, peak.nr = 48, peak.kc = 256, peak.local_m = 4, peak.stage_b = 2;
    print_message("quick search from 4x16 without the rows: %ux%u kc %u local_m %u stage_b %u, "
                  "%.1f%% of the peak, %d candidates\n", best.mr, best.nr, best.kc, best.local_m,
                  best.stage_b, 100 * model_value(&best) / model_value(&peak),
                  m.evaluations + m.compared - m.again);
    assert_true(model_value(&best) >= 0.95 * model_value(&peak));
    assert_true(m.compared <= 60);

    /* full, on AVX2: the grid and refinement try no block past 8 float16 accumulators (16
       registers of 8 floats), so the model's peak, 8 x 48 (24), is out of reach (the table's
       rows for other classes are still tried) */
    setenv("CLGRAD_CPU_CLASS", "avx2", 1);
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &start), CLG_OK);
    m = (model){.crash_mr = 12};
    o.level = CLG_TUNE_FULL;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_OK);
    assert_false(best.mr == 8 && best.nr == 48);

    /* full, AVX-512: the grid and refinement reach the peak exactly; mr 12 "crashed" on the
       way */
    setenv("CLGRAD_CPU_CLASS", "avx512-2fma", 1);
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &start), CLG_OK);
    m = (model){.crash_mr = 12};
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_OK);
    print_message("full search: %d candidates, %d rejected; best %ux%u kc %u local_m %u stage_b %u\n",
                  m.evaluations + m.compared - m.again, m.rejected, best.mr, best.nr, best.kc, best.local_m, best.stage_b);
    assert_int_equal(best.mr, 8);
    assert_int_equal(best.nr, 48);
    assert_int_equal(best.kc, 256);
    assert_int_equal(best.local_m, 4);
    assert_int_equal(best.stage_b, 2);
    assert_true(m.rejected >= 1);
    assert_true(m.compared <= 160);

    /* a noisy machine: the peak's rows (mr 8) score 3x too low alone, and worse blocks (mr
     * 14) run 3x too fast in their first paired run. Every candidate runs paired against the
     * best, so the search still ends at the peak; the lucky win is not confirmed by its second
     * run, and the score is the confirmed ratios' (the model's true value, not inflated) */
    CLG_ASSERT_STATUS(clg_gemm_set_params(ctx, &start), CLG_OK);
    m = (model){.crash_mr = 12, .lucky_mr = 14, .unlucky_mr = 8};
    o.on_compared = model_compared;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_OK);
    o.on_compared = NULL;
    assert_int_equal(best.mr, 8);
    assert_int_equal(best.nr, 48);
    assert_true(m.unconfirmed >= 1);
    assert_true(fabs(score - model_value(&best)) <= 1e-6 * score);

    /* the convolutions' blocks: quick looks next to the GEMM's rows, full finds conv_mr 6 */
    m = (model){.crash_mr = 99};
    CLG_ASSERT_STATUS(clg_conv_tune(ctx, &o, &best, &score), CLG_OK);
    assert_int_equal(best.conv_mr, 6);
    assert_int_equal(best.mr, 8); /* the GEMM's untouched */
    unsetenv("CLGRAD_CPU_CLASS"); /* the searches above on AVX-512, whatever runs the suite */

    /* everything rejected: an error that says why */
    o.evaluate = reject_all;
    o.on_candidate = NULL;
    o.level = CLG_TUNE_QUICK;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_ERR_UNSUPPORTED);
    assert_non_null(strstr(clg_last_error(), "driver said no"));
    o.level = (clg_tune_level)7;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "level"));
    o.level = CLG_TUNE_QUICK;
    o.runs = 0;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_ERR_INVALID_ARG);
    o.runs = 3;
    o.struct_size = 3;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, NULL, NULL, &score), CLG_ERR_INVALID_ARG);
    clg_ctx_destroy(ctx);
}

/* A model of a GPU: one peak among the tiles (64 x 128 tiles of 16 x 16 items, k steps of 32,
 * 4-float loads, unrolled by 2, double-buffered), 32-wide groups "crash the compiler". */
static double tile_value(const clg_gemm_params *p)
{
    if (p->kernel != CLG_GEMM_KERNEL_LOCAL)
        return 1.0;
    return 100.0 - 4.0 * fabs(log2(p->mwg / 64.0)) - 4.0 * fabs(log2(p->nwg / 128.0)) -
           3.0 * fabs(log2(p->kwg / 32.0)) - 5.0 * fabs(log2(p->mdimc / 16.0)) -
           5.0 * fabs(log2(p->ndimc / 16.0)) - 3.0 * fabs(log2(p->vw / 4.0)) -
           3.0 * fabs(log2(p->kwi / 2.0)) - 4.0 * (p->db != 1);
}

static void gpu_search_explores_the_tiles(void **state)
{
    (void)state;
    clg_ctx_options co = clg_ctx_options_default();
    co.cache_dir = "off";
    co.decisions = CLG_DECIDE_AS_GPU; /* the GPU's table rows and tile search on this device */
    clg_ctx *ctx;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &co, &ctx), CLG_OK);
    clg_gemm_params start, best;
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &start), CLG_OK);
    assert_int_equal(start.kernel, CLG_GEMM_KERNEL_LOCAL);
    model m = {.value = tile_value, .tile_crash = 1};
    clg_tune_options o = clg_tune_options_default();
    o.evaluate = model_score;
    o.compare = model_compare;
    o.on_candidate = model_report; /* refusals must be the parameter check's */
    o.user = &m;
    o.level = CLG_TUNE_FULL;
    double score = 0;
    CLG_ASSERT_STATUS(clg_gemm_tune(ctx, &o, &best, &score), CLG_OK);
    print_message("GPU search: %d candidates, %d crashed; best tile %ux%u kwg %u items %ux%u vw %u "
                  "kwi %u db %u\n", m.evaluations + m.compared - m.again, m.rejected, best.mwg, best.nwg, best.kwg,
                  best.mdimc, best.ndimc, best.vw, best.kwi, best.db);
    assert_int_equal(best.kernel, CLG_GEMM_KERNEL_LOCAL);
    assert_int_equal(best.mwg, 64);
    assert_int_equal(best.nwg, 128);
    assert_int_equal(best.kwg, 32);
    assert_int_equal(best.mdimc, 16);
    assert_int_equal(best.ndimc, 16);
    assert_int_equal(best.vw, 4);
    assert_int_equal(best.kwi, 2);
    assert_int_equal(best.db, 1);
    assert_true(m.rejected >= 1);
    assert_true(m.evaluations + m.compared <= 256);
    clg_ctx_destroy(ctx);
}

static int real_runs_skipped(void)
{
    const char *why = getenv("CLGRAD_GPU_PROFILE") && !strcmp(getenv("CLGRAD_GPU_PROFILE"), "1")
                          ? "the GPU profile's local-memory GEMM on a CPU makes each score minutes long"
                      : getenv("CLG_TEST_SMALL") ? "a simulator runs each score for many minutes"
                      : getenv("CLG_TEST_NO_TIMING") ? "scores are timings, which instrumented host code distorts"
                                                     : NULL;
    if (why)
        print_message("skipped: %s\n", why);
    return why != NULL;
}

static void real_scores_check_results_first(void **state)
{
    (void)state;
    if (real_runs_skipped())
        return;
    clg_ctx *ctx = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
    clg_gemm_params p, kept;
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &kept), CLG_OK);
    p = kept;
    /* awkward blocks the table never holds: 5 x 48 for the GEMM, 5 x 16 for convolutions */
    p.kernel = CLG_GEMM_KERNEL_REG, p.mr = 5, p.nr = 48, p.conv_mr = 5, p.conv_nr = 16;
    double score = 0, ratio = 0;
    CLG_ASSERT_STATUS(clg_gemm_tune_score(ctx, &p, 1, &score), CLG_OK);
    CLG_ASSERT_STATUS(clg_gemm_tune_compare(ctx, &p, &kept, 1, &ratio), CLG_OK);
    print_message("GEMM 5x48: %.1f GFLOP/s, %.2fx the current blocks\n", score, ratio);
    assert_true(score > 0 && ratio > 0);
    score = ratio = 0;
    CLG_ASSERT_STATUS(clg_conv_tune_score(ctx, &p, 1, &score), CLG_OK);
    CLG_ASSERT_STATUS(clg_conv_tune_compare(ctx, &p, &kept, 1, &ratio), CLG_OK);
    print_message("convolutions 5x16: %.1f GFLOP/s, %.2fx the current blocks\n", score, ratio);
    assert_true(score > 0 && ratio > 0);
    clg_gemm_params after;
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &after), CLG_OK);
    assert_int_equal(after.mr, kept.mr); /* restored */
    assert_int_equal(after.conv_mr, kept.conv_mr);
    p.nr = 24;
    CLG_ASSERT_STATUS(clg_gemm_tune_score(ctx, &p, 1, &score), CLG_ERR_INVALID_ARG);
    p.nr = 32, p.conv_nr = 48;
    CLG_ASSERT_STATUS(clg_conv_tune_score(ctx, &p, 1, &score), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "conv_nr"));
    CLG_ASSERT_STATUS(clg_gemm_tune_score(ctx, &kept, 0, &score), CLG_ERR_INVALID_ARG);
    clg_ctx_destroy(ctx);
}

typedef struct builds {
    int tuning_started, tuning_done, others;
} builds;

static void on_build(void *user, const char *family, double seconds)
{
    builds *b = user;
    if (strcmp(family, "tuning") == 0)
        ++*(seconds == 0 ? &b->tuning_started : &b->tuning_done);
    else
        b->others++;
}

static void asked_tuning_runs_once_and_is_stored(void **state)
{
    (void)state;
    setenv("CLGRAD_TUNE", "sometimes", 1);
    clg_ctx *ctx = NULL;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), NULL, &ctx), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_last_error(), "CLGRAD_TUNE=sometimes"));
    unsetenv("CLGRAD_TUNE");
    if (real_runs_skipped())
        return;
    if (!strstr(clg_test_device()->platform, "Portable Computing Language")) {
        /* the search and its storing are the library's, the same on every platform */
        print_message("skipped: a whole search on first use runs on POCL only (minutes of "
                      "compiles on %s)\n", clg_test_device()->platform);
        return;
    }
    char *dir = clg_test_tempdir("tune");
    builds b = {0, 0, 0};
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = dir;
    o.tune = 1;
    o.on_build = on_build;
    o.on_build_user = &b;
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &o, &ctx), CLG_OK);
    clg_gemm_params tuned, table = clg_gemm_params_default(clg_ctx_device(ctx));
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &tuned), CLG_OK); /* a lookup never tunes */
    assert_int_equal(b.tuning_started, 0);
    assert_int_equal(tuned.mr, table.mr);
    assert_int_equal(tuned.kc, table.kc);
    CLG_ASSERT_STATUS(clg_gemm_tune_if_wanted(ctx), CLG_OK); /* as clg_train does */
    CLG_ASSERT_STATUS(clg_gemm_tune_if_wanted(ctx), CLG_OK); /* once */
    assert_int_equal(b.tuning_started, 1);
    assert_int_equal(b.tuning_done, 1);
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &tuned), CLG_OK);
    print_message("quick tuning chose %ux%u kc %u local %ux%u (the table: %ux%u kc %u)\n", tuned.mr,
                  tuned.nr, tuned.kc, tuned.local_m, tuned.local_n, table.mr, table.nr, table.kc);
    /* the tuned context still multiplies right (the search checked every candidate) */
    float a[6] = {1, 2, 3, 4, 5, 6}, bm[6] = {1, 0, 0, 1, 1, 1}, c[4];
    clg_tensor *ta = clg_test_tensor(ctx, (clg_shape){6, 1, 1, 1}, a);
    clg_tensor *tb = clg_test_tensor(ctx, (clg_shape){6, 1, 1, 1}, bm);
    clg_tensor *tc = clg_test_tensor(ctx, (clg_shape){4, 1, 1, 1}, NULL);
    CLG_ASSERT_STATUS(clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, 2, 2, 3, 1.0f, (clg_matrix){ta, 0, 3},
                                (clg_matrix){tb, 0, 2}, 0.0f, (clg_matrix){tc, 0, 2}), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(tc, c, 4), CLG_OK);
    assert_true(c[0] == 4 && c[1] == 5 && c[2] == 10 && c[3] == 11);
    clg_tensor_destroy(ta), clg_tensor_destroy(tb), clg_tensor_destroy(tc);
    clg_test_guards_check();
    clg_ctx_destroy(ctx);

    /* the next context loads the stored result and tunes nothing */
    b = (builds){0, 0, 0};
    CLG_ASSERT_STATUS(clg_ctx_create(clg_test_device(), &o, &ctx), CLG_OK);
    clg_gemm_params again;
    CLG_ASSERT_STATUS(clg_gemm_tune_if_wanted(ctx), CLG_OK);
    CLG_ASSERT_STATUS(clg_gemm_get_params(ctx, &again), CLG_OK);
    assert_int_equal(b.tuning_started, 0);
    assert_int_equal(again.mr, tuned.mr);
    assert_int_equal(again.nr, tuned.nr);
    assert_int_equal(again.kc, tuned.kc);
    assert_int_equal(again.local_m, tuned.local_m);
    clg_ctx_destroy(ctx);
    clg_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_classes_from_what_opencl_reports),
        cmocka_unit_test(search_finds_the_peak_and_survives_rejections),
        cmocka_unit_test(gpu_search_explores_the_tiles),
        cmocka_unit_test(real_scores_check_results_first),
        cmocka_unit_test(asked_tuning_runs_once_and_is_stored),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clg_test_devices_release();
    return rc;
}
