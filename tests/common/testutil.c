/* Shared test fixtures; see testutil.h. */
#define _DEFAULT_SOURCE
#include "testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t clg_test_seed(void)
{
    const char *s = getenv("CLG_TEST_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    printf("# seed %llu (rerun with CLG_TEST_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

void clg_test_rng_init(clg_test_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

uint64_t clg_test_rng_next(clg_test_rng *rng)
{
    /* splitmix64 */
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float clg_test_uniform(clg_test_rng *rng, float lo, float hi)
{
    double u = (double)(clg_test_rng_next(rng) >> 11) * 0x1.0p-53;
    return (float)(lo + (hi - lo) * u);
}

void clg_test_fill_uniform(clg_test_rng *rng, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = clg_test_uniform(rng, lo, hi);
}

void clg_test_fill_int(clg_test_rng *rng, float *x, size_t n, int lo, int hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(lo + (int)(clg_test_rng_next(rng) % (uint64_t)(hi - lo + 1)));
}

void clg_test_poison_nan(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

float *clg_test_abs_copy(const float *x, size_t n)
{
    float *a = malloc((n ? n : 1) * sizeof *a);
    assert_non_null(a);
    for (size_t i = 0; i < n; i++)
        a[i] = fabsf(x[i]);
    return a;
}

double clg_test_rel_l2(const float *a, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isinf(a[i]))
            return INFINITY;
        double d = (double)a[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

double clg_test_max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (isnan(d))
            return INFINITY;
        if (d > m)
            m = d;
    }
    return m;
}

static clg_device_info *test_devices;
static size_t test_device_count;

const clg_device_info *clg_test_device(void)
{
    if (!test_devices) {
        clg_status st = clg_devices_list(&test_devices, &test_device_count);
        if (st != CLG_OK)
            fail_msg("clg_devices_list: %s: %s", clg_status_name(st), clg_last_error());
    }
    clg_device_info *chosen;
    size_t count;
    clg_status st = clg_devices_select(test_devices, test_device_count, CLG_ENV_AUTO, "", &chosen,
                                       &count);
    if (st != CLG_OK)
        fail_msg("no device: %s", clg_last_error());
    const clg_device_info *d = &test_devices[chosen[0].index];
    clg_devices_free(chosen, count);
    return d;
}

size_t clg_test_small_limit(void)
{
    const char *s = getenv("CLG_TEST_SMALL");
    return s && *s ? (size_t)strtoull(s, NULL, 10) : 0;
}

int clg_test_too_big(double work, size_t *left_out)
{
    size_t limit = clg_test_small_limit();
    if (!limit || work <= (double)limit)
        return 0;
    ++*left_out;
    return 1;
}

void clg_test_report_left_out(const char *what, size_t left_out, size_t total)
{
    if (left_out)
        print_message("%s: %zu of %zu cases left out (CLG_TEST_SMALL=%zu multiply-adds)\n", what,
                      left_out, total, clg_test_small_limit());
}

int clg_test_device_is_pocl(void)
{
    return strstr(clg_test_device()->platform, "Portable Computing Language") != NULL;
}

void clg_test_skip_unless_pocl(void)
{
    const char *why = getenv("CLG_TEST_POCL_ONLY");
    if (!why || !*why)
        return;
    if (clg_test_device_is_pocl())
        return;
    printf("skipped on %s: %s\n", clg_test_device()->platform, why);
    clg_test_devices_release();
    exit(77);
}

void clg_test_devices_release(void)
{
    clg_devices_free(test_devices, test_device_count);
    test_devices = NULL;
    test_device_count = 0;
}

static clg_ctx *test_ctx(const char *cache_dir, int profiling)
{
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = cache_dir;
    o.profiling = profiling;
    clg_ctx *ctx = NULL;
    clg_status st = clg_ctx_create(clg_test_device(), &o, &ctx);
    if (st != CLG_OK)
        fail_msg("clg_ctx_create: %s: %s", clg_status_name(st), clg_last_error());
    return ctx;
}

clg_ctx *clg_test_ctx(const char *cache_dir)
{
    return test_ctx(cache_dir, 0);
}

clg_ctx *clg_test_profiled_ctx(void)
{
    return test_ctx(getenv("CLGRAD_CACHE_DIR"), 1);
}

char *clg_test_tempdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/clgrad-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(path))
        fail_msg("mkdtemp(%s) failed", path);
    return strdup(path);
}

void clg_test_rmtree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        print_message("could not remove %s\n", path);
}

/* Guard regions: every test tensor is a view of the middle of a parent one sample larger on
 * each side, the two guard samples NaN. The parents are kept until the fixture's teardown,
 * which checks that no op wrote outside its tensors (and releases them). */
enum { MAX_GUARDED = 4096 };
static clg_tensor *guarded[MAX_GUARDED];
static size_t nguarded;

clg_tensor *clg_test_tensor(clg_ctx *ctx, clg_shape s, const float *host)
{
    clg_tensor *parent = NULL, *t = NULL;
    clg_shape ps = s;
    ps.n += 2;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, ps, &parent), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_fill(parent, NAN), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(parent, 1, s.n, &t), CLG_OK);
    if (host)
        CLG_ASSERT_STATUS(clg_tensor_upload(t, host, clg_shape_numel(s)), CLG_OK);
    if (nguarded < MAX_GUARDED)
        guarded[nguarded++] = parent;
    else
        clg_tensor_destroy(parent); /* the view keeps the buffer; its guards go unchecked */
    return t;
}

void clg_test_guards_check(void)
{
    for (size_t i = 0; i < nguarded; i++) {
        clg_shape ps = clg_tensor_shape(guarded[i]);
        size_t n = clg_shape_numel(ps), per = n / ps.n;
        float *all = malloc(n * sizeof *all);
        assert_non_null(all);
        CLG_ASSERT_STATUS(clg_tensor_download(guarded[i], all, n), CLG_OK);
        for (size_t k = 0; k < per; k++)
            if (!isnan(all[k]) || !isnan(all[n - per + k]))
                fail_msg("tensor %zu (%zux%zux%zux%zu): an op wrote into the guard %s it "
                         "(element %zu)", i, ps.n - 2, ps.c, ps.h, ps.w,
                         !isnan(all[k]) ? "before" : "after", k);
        free(all);
        clg_tensor_destroy(guarded[i]);
    }
    nguarded = 0;
}

void clg_test_fixture_setup(clg_ctx **ctx, clg_test_rng *rng)
{
    *ctx = clg_test_ctx(getenv("CLGRAD_CACHE_DIR"));
    clg_test_rng_init(rng, clg_test_seed());
}

void clg_test_fixture_teardown(clg_ctx *ctx)
{
    clg_test_guards_check();
    clg_ctx_destroy(ctx);
    clg_test_devices_release();
}

float *clg_test_learnables(clg_net *net, size_t *n)
{
    *n = clg_net_param_count(net, CLG_PARAMS_LEARNABLE);
    float *w = malloc((*n ? *n : 1) * sizeof *w);
    assert_non_null(w);
    CLG_ASSERT_STATUS(clg_net_get_params(net, CLG_PARAMS_LEARNABLE, w, *n), CLG_OK);
    return w;
}

void clg_test_fixture_setup_dir(clg_ctx **ctx, clg_test_rng *rng, char **dir, const char *tag)
{
    clg_test_fixture_setup(ctx, rng);
    *dir = clg_test_tempdir(tag);
}

void clg_test_fixture_teardown_dir(clg_ctx *ctx, char *dir)
{
    clg_test_rmtree(dir);
    free(dir);
    clg_test_fixture_teardown(ctx);
}

void clg_test_skip_under_simulator(const char *why)
{
    if (getenv("CLG_TEST_SMALL")) {
        print_message("skipped under the simulator (CLG_TEST_SMALL): %s\n", why);
        skip();
    }
}

void clg_test_apply_filters(void)
{
    const char *only = getenv("CLG_TEST_FILTER"), *skip = getenv("CLG_TEST_SKIP");
    if (only && *only)
        cmocka_set_test_filter(only);
    if (skip && *skip)
        cmocka_set_skip_filter(skip);
}
