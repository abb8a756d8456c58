/* Shared test fixtures: a POCL context, a seeded RNG, fills, NaN poisoning, error norms and
 * temporary folders. Every random test prints its seed (set CLG_TEST_SEED to rerun one). */
#ifndef CLGRAD_TESTUTIL_H
#define CLGRAD_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "clgrad/clgrad.h"
#include "runtime/testing.h" /* the library's test hooks */

typedef struct clg_test_rng {
    uint64_t state;
} clg_test_rng;

/* Seed from CLG_TEST_SEED or the clock; printed so that a failure can be replayed. */
uint64_t clg_test_seed(void);
void clg_test_rng_init(clg_test_rng *rng, uint64_t seed);
uint64_t clg_test_rng_next(clg_test_rng *rng);
/* Uniform in [lo, hi). */
float clg_test_uniform(clg_test_rng *rng, float lo, float hi);

/* CLG_TEST_SMALL=N (under oclgrind, which interprets every work-item): op tests leave out the
 * cases of more than N multiply-adds and say how many. 0 (unset): no limit. */
size_t clg_test_small_limit(void);
/* 1 when a case of `work` multiply-adds is left out; counts it in *left_out. */
int clg_test_too_big(double work, size_t *left_out);
/* Prints "N of M cases left out (CLG_TEST_SMALL)" when any were. */
void clg_test_report_left_out(const char *what, size_t left_out, size_t total);
/* Under oclgrind (CLG_TEST_SMALL set): says the test is skipped there and why ("host-side
 * logic only": it adds no GPU path of its own) and skips it; else returns. */
void clg_test_skip_under_simulator(const char *why);

/* CLG_TEST_FILTER and CLG_TEST_SKIP (cmocka's name patterns, e.g. "one_*"): run only, or
 * leave out, the named cases of the next cmocka_run_group_tests (to time them one by one, or
 * to leave out under oclgrind what would take long over twice). */
void clg_test_apply_filters(void);

void clg_test_fill_uniform(clg_test_rng *rng, float *x, size_t n, float lo, float hi);
/* Small integers in [lo, hi]: sums of their products stay exact in float32. */
void clg_test_fill_int(clg_test_rng *rng, float *x, size_t n, int lo, int hi);
void clg_test_poison_nan(float *x, size_t n);
/* A malloc'ed copy of x with every value's sign dropped: a reference computed from such copies
 * is the sum of its terms' magnitudes, the scale of a sum's rounding error (free it). */
float *clg_test_abs_copy(const float *x, size_t n);
/* ||a - b|| / ||b|| in double; NaN anywhere gives +inf so that it fails every bound. */
double clg_test_rel_l2(const float *a, const double *ref, size_t n);
double clg_test_max_abs_diff(const float *a, const float *b, size_t n);

/* The first device of the "auto" environment (the first GPU if any, else the CPU: POCL or
 * Intel's runtime here, oclgrind's simulated GPU under oclgrind), asserting success. The
 * list stays valid until clg_test_devices_release. */
const clg_device_info *clg_test_device(void);
void clg_test_devices_release(void);
int clg_test_device_is_pocl(void); /* 1 when that device is POCL's */
/* For a test that CMake marks POCL-only (CLG_TEST_POCL_ONLY holds why, and SKIP_RETURN_CODE
 * 77): on another implementation it prints that it is skipped and why, and exits 77. */
void clg_test_skip_unless_pocl(void);
/* A context on that device with the binary cache in `cache_dir` ("off" for none). */
clg_ctx *clg_test_ctx(const char *cache_dir);
/* A context on that device with profiling on (clg_ctx_kernel_times), the suite's cache. */
clg_ctx *clg_test_profiled_ctx(void);

/* A tensor of shape s on ctx, filled from host, or with NaN when host is NULL (so that an
 * element an op fails to write shows up). Asserts success. It is a view into a buffer with a
 * NaN guard sample before and after it; clg_test_guards_check (run by the fixture teardown)
 * fails if any op wrote into a guard, and frees the buffers. */
clg_tensor *clg_test_tensor(clg_ctx *ctx, clg_shape s, const float *host);
void clg_test_guards_check(void);

/* Group fixture of most op tests: a context on the CPU device (binary cache from
 * CLGRAD_CACHE_DIR) and an RNG seeded by clg_test_seed(). */
void clg_test_fixture_setup(clg_ctx **ctx, clg_test_rng *rng);
void clg_test_fixture_teardown(clg_ctx *ctx);

/* The same with a temporary folder (clg_test_tempdir(tag) into *dir), removed at teardown. */
void clg_test_fixture_setup_dir(clg_ctx **ctx, clg_test_rng *rng, char **dir, const char *tag);
void clg_test_fixture_teardown_dir(clg_ctx *ctx, char *dir);

/* The net's learnable parameters (clg_net_get_params), malloc'd; *n receives their count. */
float *clg_test_learnables(clg_net *net, size_t *n);

/* mkdtemp under $TMPDIR or /tmp; returns a malloc'd path. rm -r with clg_test_rmtree. */
char *clg_test_tempdir(const char *tag);
void clg_test_rmtree(const char *path);

/* Asserts that a call returned `expected` and left a non-empty message. */
#define CLG_ASSERT_STATUS(expr, expected)                                                    \
    do {                                                                                     \
        clg_status st_ = (expr);                                                             \
        if (st_ != (expected))                                                               \
            fail_msg("%s returned %s, expected %s (%s)", #expr, clg_status_name(st_),        \
                     clg_status_name(expected), clg_last_error());                           \
        if (st_ != CLG_OK)                                                                   \
            assert_true(clg_last_error()[0] != '\0');                                        \
    } while (0)

#endif
