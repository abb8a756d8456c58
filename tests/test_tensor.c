/* Tensors: round trips on random data of awkward sizes, fill, copy, batch views, and every
 * error path (shapes, small host buffers, NULLs, oversized allocations). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"

static clg_ctx *ctx;
static clg_test_rng rng;

static int setup(void **state)
{
    (void)state;
    clg_test_fixture_setup(&ctx, &rng);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clg_test_fixture_teardown(ctx);
    return 0;
}

static const clg_shape shapes[] = {
    {1, 1, 1, 1}, {3, 1, 1, 1}, {1, 7, 1, 1}, {2, 3, 5, 7}, {33, 1, 3, 3}, {1, 1, 17, 1},
    {64, 1, 28, 28}, {5, 3, 31, 29},
};

static clg_tensor *make(clg_shape s)
{
    clg_tensor *t = NULL;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, s, &t), CLG_OK);
    return t;
}

static void round_trip_is_exact(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        clg_tensor *t = make(shapes[k]);
        size_t n = clg_tensor_numel(t);
        assert_int_equal(n, clg_shape_numel(shapes[k]));
        float *in = malloc(n * sizeof *in), *out = malloc((n + 1) * sizeof *out);
        clg_test_fill_uniform(&rng, in, n, -3.0f, 3.0f);
        clg_test_poison_nan(out, n + 1);
        CLG_ASSERT_STATUS(clg_tensor_upload(t, in, n), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(t, out, n + 1), CLG_OK);
        assert_memory_equal(in, out, n * sizeof *in);
        assert_true(isnan(out[n])); /* nothing written past the tensor */
        clg_shape got = clg_tensor_shape(t);
        assert_memory_equal(&got, &shapes[k], sizeof got);
        assert_ptr_equal(clg_tensor_ctx(t), ctx);
        free(in);
        free(out);
        clg_tensor_destroy(t);
    }
}

static void fill_writes_every_element(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        clg_tensor *t = make(shapes[k]);
        size_t n = clg_tensor_numel(t);
        float *buf = malloc(n * sizeof *buf);
        clg_test_poison_nan(buf, n);
        CLG_ASSERT_STATUS(clg_tensor_upload(t, buf, n), CLG_OK);
        float v = clg_test_uniform(&rng, -5.0f, 5.0f);
        CLG_ASSERT_STATUS(clg_tensor_fill(t, v), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(t, buf, n), CLG_OK);
        for (size_t i = 0; i < n; i++)
            if (buf[i] != v)
                fail_msg("shape %zu: element %zu is %g, expected %g", k, i, buf[i], v);
        free(buf);
        clg_tensor_destroy(t);
    }
}

/* Scale is exact per element (one float multiply); the sum of squares is compared with a
 * double reference: float partials over up to n/16384 terms each, so 1e-6 relative holds
 * for these sizes. Views scale and sum only their own elements. */
static void scale_and_sum_of_squares(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        clg_tensor *t = make(shapes[k]);
        size_t n = clg_tensor_numel(t);
        float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
        clg_test_fill_uniform(&rng, in, n, -2.0f, 2.0f);
        CLG_ASSERT_STATUS(clg_tensor_upload(t, in, n), CLG_OK);
        double got, ref = 0;
        for (size_t i = 0; i < n; i++)
            ref += (double)in[i] * in[i];
        CLG_ASSERT_STATUS(clg_tensor_sum_squares(t, &got), CLG_OK);
        if (fabs(got - ref) > 1e-6 * ref)
            fail_msg("shape %zu: sum of squares %.9g, expected %.9g", k, got, ref);
        float a = clg_test_uniform(&rng, -3.0f, 3.0f);
        CLG_ASSERT_STATUS(clg_tensor_scale(t, a), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(t, out, n), CLG_OK);
        for (size_t i = 0; i < n; i++)
            if (out[i] != in[i] * a)
                fail_msg("shape %zu: element %zu scaled to %g, expected %g", k, i, out[i], in[i] * a);
        if (shapes[k].n > 2) {
            clg_tensor *v;
            CLG_ASSERT_STATUS(clg_tensor_view_batch(t, 1, 1, &v), CLG_OK);
            size_t per = n / shapes[k].n;
            CLG_ASSERT_STATUS(clg_tensor_sum_squares(v, &got), CLG_OK);
            ref = 0;
            for (size_t i = 0; i < per; i++)
                ref += (double)out[per + i] * out[per + i];
            assert_true(fabs(got - ref) <= 1e-6 * ref);
            CLG_ASSERT_STATUS(clg_tensor_scale(v, 0.0f), CLG_OK);
            CLG_ASSERT_STATUS(clg_tensor_download(t, in, n), CLG_OK);
            for (size_t i = 0; i < n; i++)
                assert_true(in[i] == (i >= per && i < 2 * per ? 0.0f : out[i]));
            clg_tensor_destroy(v);
        }
        free(in);
        free(out);
        clg_tensor_destroy(t);
    }
}

/* NaN and both infinities are counted wherever they sit; huge finite values are not. */
static void nonfinite_values_are_counted(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        clg_tensor *t = make(shapes[k]);
        size_t n = clg_tensor_numel(t), got = 99;
        float *x = malloc(n * sizeof *x);
        clg_test_fill_uniform(&rng, x, n, -1e38f, 1e38f);
        CLG_ASSERT_STATUS(clg_tensor_upload(t, x, n), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_count_nonfinite(t, &got), CLG_OK);
        assert_int_equal(got, 0);
        size_t planted = 0;
        const float bad[3] = {NAN, INFINITY, -INFINITY};
        for (size_t i = n - 1, j = 0; j < 3; j++, i /= 2) {
            if (isfinite(x[i]))
                planted++;
            x[i] = bad[j];
        }
        CLG_ASSERT_STATUS(clg_tensor_upload(t, x, n), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_count_nonfinite(t, &got), CLG_OK);
        assert_int_equal(got, planted);
        free(x);
        clg_tensor_destroy(t);
    }
}

/* A profiled context counts each kernel's launches and device time; reset starts over. */
static void kernel_times_are_counted(void **state)
{
    (void)state;
    clg_ctx *pc = clg_test_profiled_ctx();
    clg_tensor *t;
    CLG_ASSERT_STATUS(clg_tensor_create(pc, (clg_shape){1, 1, 64, 64}, &t), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_fill(t, 1.0f), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_fill(t, 2.0f), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_scale(t, 2.0f), CLG_OK);
    clg_kernel_time kt[8];
    size_t n;
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(pc, kt, 8, &n, 1), CLG_OK);
    assert_int_equal(n, 2);
    assert_string_equal(kt[0].name, "clg_tensor_fill");
    assert_int_equal(kt[0].calls, 2);
    assert_true(kt[0].seconds > 0);
    assert_string_equal(kt[1].name, "clg_tensor_scale");
    assert_int_equal(kt[1].calls, 1);
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(pc, NULL, 0, &n, 0), CLG_OK);
    assert_int_equal(n, 0); /* reset */
    clg_tensor_destroy(t);
    clg_ctx_destroy(pc);
    /* the fixture's context has filled tensors without profiling: nothing counted */
    CLG_ASSERT_STATUS(clg_ctx_kernel_times(ctx, NULL, 0, &n, 0), CLG_OK);
    assert_int_equal(n, 0);
}

static void copy_and_views_share_memory_correctly(void **state)
{
    (void)state;
    clg_shape s = {7, 3, 5, 5};
    size_t per = 3 * 5 * 5, n = 7 * per;
    clg_tensor *a = make(s), *b = make(s);
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    clg_test_fill_uniform(&rng, in, n, -1.0f, 1.0f);
    CLG_ASSERT_STATUS(clg_tensor_upload(a, in, n), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_fill(b, NAN), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_copy(b, a), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(b, out, n), CLG_OK);
    assert_memory_equal(in, out, n * sizeof *in);

    /* A view of samples 2..5 and a view of its samples 1..2 (parent samples 3..4). */
    clg_tensor *v, *vv;
    CLG_ASSERT_STATUS(clg_tensor_view_batch(a, 2, 4, &v), CLG_OK);
    assert_int_equal(clg_tensor_shape(v).n, 4);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(v, 1, 2, &vv), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(vv, out, 2 * per), CLG_OK);
    assert_memory_equal(out, in + 3 * per, 2 * per * sizeof *in);
    CLG_ASSERT_STATUS(clg_tensor_fill(vv, 9.0f), CLG_OK);
    float *part = malloc(2 * per * sizeof *part);
    clg_test_fill_uniform(&rng, part, 2 * per, 10.0f, 11.0f);
    clg_tensor_destroy(v);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(a, 0, 2, &v), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(v, part, 2 * per), CLG_OK);
    clg_tensor_destroy(a); /* views keep the memory alive */
    clg_tensor *whole;
    CLG_ASSERT_STATUS(clg_tensor_view_batch(vv, 0, 2, &whole), CLG_OK);
    clg_tensor_destroy(whole);
    CLG_ASSERT_STATUS(clg_tensor_download(v, out, 2 * per), CLG_OK);
    assert_memory_equal(out, part, 2 * per * sizeof *part);
    CLG_ASSERT_STATUS(clg_tensor_download(vv, out, 2 * per), CLG_OK);
    for (size_t i = 0; i < 2 * per; i++)
        assert_true(out[i] == 9.0f);

    /* Copy into a view of b, then check b's other samples are untouched. */
    clg_tensor *bv;
    CLG_ASSERT_STATUS(clg_tensor_view_batch(b, 5, 2, &bv), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_copy(bv, vv), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(b, out, n), CLG_OK);
    assert_memory_equal(out, in, 5 * per * sizeof *in);
    for (size_t i = 5 * per; i < n; i++)
        assert_true(out[i] == 9.0f);
    clg_tensor_destroy(bv);
    clg_tensor_destroy(v);
    clg_tensor_destroy(vv);
    clg_tensor_destroy(b);
    free(in);
    free(out);
    free(part);
}

static void bad_arguments_are_reported(void **state)
{
    (void)state;
    clg_tensor *t = make((clg_shape){2, 3, 4, 5}), *u = make((clg_shape){2, 3, 5, 4}), *out;
    float host[120];
    clg_test_fill_uniform(&rng, host, 120, 0, 1);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){2, 0, 4, 5}, &out), CLG_ERR_INVALID_ARG);
    assert_null(out);
    CLG_ASSERT_STATUS(clg_tensor_create(NULL, (clg_shape){1, 1, 1, 1}, &out), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){1, 1, 1, 1}, NULL), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){SIZE_MAX / 2, 4, 1, 1}, &out),
                      CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_upload(t, host, 119), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "119"));
    CLG_ASSERT_STATUS(clg_tensor_upload(t, host, 121), CLG_ERR_SHAPE);
    CLG_ASSERT_STATUS(clg_tensor_upload(t, NULL, 120), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_upload(NULL, host, 120), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_download(t, host, 119), CLG_ERR_INVALID_ARG);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "119"));
    CLG_ASSERT_STATUS(clg_tensor_download(NULL, host, 120), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_fill(NULL, 1.0f), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_copy(u, t), CLG_ERR_SHAPE);
    assert_non_null(strstr(clg_ctx_last_error(ctx), "2x3x4x5"));
    CLG_ASSERT_STATUS(clg_tensor_copy(NULL, t), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(t, 2, 1, &out), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(t, 1, 2, &out), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(t, 0, 0, &out), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_tensor_view_batch(t, 0, 1, NULL), CLG_ERR_INVALID_ARG);

    /* Tensors from two contexts cannot be mixed. */
    clg_ctx *other = clg_test_ctx("off");
    clg_tensor *w;
    CLG_ASSERT_STATUS(clg_tensor_create(other, (clg_shape){2, 3, 4, 5}, &w), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_copy(w, t), CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(w);
    clg_ctx_destroy(other);
    clg_tensor_destroy(t);
    clg_tensor_destroy(u);
    clg_tensor_destroy(NULL);
}

static void oversized_allocation_names_the_size(void **state)
{
    (void)state;
    const clg_device_info *d = clg_ctx_device(ctx);
    size_t floats = (size_t)(d->max_alloc_bytes / sizeof(float)) + 1;
    clg_tensor *t = NULL;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){floats, 1, 1, 1}, &t),
                      CLG_ERR_OUT_OF_DEVICE_MEMORY);
    assert_null(t);
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%zu bytes", floats * sizeof(float));
    assert_non_null(strstr(clg_ctx_last_error(ctx), bytes));
    /* The context still works afterwards. */
    t = make((clg_shape){4, 1, 1, 1});
    CLG_ASSERT_STATUS(clg_tensor_fill(t, 1.0f), CLG_OK);
    clg_tensor_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_is_exact),
        cmocka_unit_test(fill_writes_every_element),
        cmocka_unit_test(scale_and_sum_of_squares),
        cmocka_unit_test(kernel_times_are_counted),
        cmocka_unit_test(nonfinite_values_are_counted),
        cmocka_unit_test(copy_and_views_share_memory_correctly),
        cmocka_unit_test(bad_arguments_are_reported),
        cmocka_unit_test(oversized_allocation_names_the_size),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
