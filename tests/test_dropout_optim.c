/* Dropout (Philox known answers, the device mask against a host Philox, determinism, rate,
 * backward) and optimizers (device against host over 100 steps, host against double). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/testutil.h"
#include "tensor/tensor_internal.h"

static clg_ctx *ctx;
static clg_test_rng rng;

/* Philox4x32-10, written from the paper: the reference for the kernel's generator. */
static void philox(uint32_t ctr[4], uint32_t key[2])
{
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * ctr[0], p1 = (uint64_t)0xCD9E8D57u * ctr[2];
        uint32_t out[4] = {(uint32_t)(p1 >> 32) ^ ctr[1] ^ key[0], (uint32_t)p1,
                           (uint32_t)(p0 >> 32) ^ ctr[3] ^ key[1], (uint32_t)p0};
        memcpy(ctr, out, sizeof out);
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
    }
}

static int host_keep(uint64_t i, uint64_t seed, uint64_t step, float p)
{
    uint32_t ctr[4] = {(uint32_t)(i >> 2), (uint32_t)(i >> 34), (uint32_t)step, (uint32_t)(step >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    philox(ctr, key);
    return (float)(ctr[i & 3] >> 8) * 0x1.0p-24f >= p;
}

static void philox_known_answers(void **state)
{
    (void)state;
    /* Known-answer vectors of the Random123 distribution (kat_vectors). */
    uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0};
    philox(c0, k0);
    uint32_t e0[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    assert_memory_equal(c0, e0, sizeof e0);
    uint32_t c1[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, k1[2] = {0xffffffff, 0xffffffff};
    philox(c1, k1);
    uint32_t e1[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
    assert_memory_equal(c1, e1, sizeof e1);
    uint32_t c2[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, k2[2] = {0xa4093822, 0x299f31d0};
    philox(c2, k2);
    uint32_t e2[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    assert_memory_equal(c2, e2, sizeof e2);
}

static void dropout_mask_is_philox_and_deterministic(void **state)
{
    (void)state;
    const size_t n = 10007;
    const float p = 0.4f;
    const uint64_t seed = 0x1234567890abcdefull, step = 77;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *y2 = malloc(n * sizeof *y2);
    clg_test_fill_uniform(&rng, x, n, 0.5f, 2.0f); /* never zero: a zero output means dropped */
    clg_tensor *tx, *ty;
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){n, 1, 1, 1}, &tx), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_create(ctx, (clg_shape){n, 1, 1, 1}, &ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_upload(tx, x, n), CLG_OK);
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, p, seed, step, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y, n), CLG_OK);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = host_keep(i, seed, step, p);
        float want = keep ? x[i] * (1.0f / (1.0f - p)) : 0.0f;
        if (y[i] != want)
            fail_msg("element %zu: %g, expected %g", i, y[i], want);
        kept += (size_t)keep;
    }
    /* Binomial(n, 0.6): 4 standard deviations is about 196. */
    assert_true(fabs((double)kept - 0.6 * n) < 4 * sqrt(n * 0.24));
    /* Same (seed, step): same output; another step: another mask. */
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, p, seed, step, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y2, n), CLG_OK);
    assert_memory_equal(y, y2, n * sizeof *y);
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, p, seed, step + 1, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y2, n), CLG_OK);
    assert_true(memcmp(y, y2, n * sizeof *y) != 0);
    /* Backward redraws the forward's mask: dx = dy * mask / (1 - p), in place. */
    CLG_ASSERT_STATUS(clg_tensor_upload(ty, x, n), CLG_OK);
    CLG_ASSERT_STATUS(clg_dropout_backward(ctx, p, seed, step, ty, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y2, n), CLG_OK);
    assert_memory_equal(y, y2, n * sizeof *y);
    /* p = 0 keeps everything unchanged. */
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, 0.0f, seed, step, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, y2, n), CLG_OK);
    assert_memory_equal(x, y2, n * sizeof *x);
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, 1.0f, seed, step, tx, ty), CLG_ERR_INVALID_ARG);
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, -0.1f, seed, step, tx, ty), CLG_ERR_INVALID_ARG);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(ty);
    free(x);
    free(y);
    free(y2);
}

/* Shards of a batch (any split, odd offsets included) draw exactly the whole batch's mask. */
static void shards_draw_the_whole_batch_mask(void **state)
{
    (void)state;
    const size_t n = 1003;
    float *x = malloc(n * sizeof *x), *whole = malloc(n * sizeof *whole), *parts = malloc(n * sizeof *parts);
    clg_test_fill_uniform(&rng, x, n, 0.5f, 1.5f);
    clg_tensor *tx = clg_test_tensor(ctx, (clg_shape){n, 1, 1, 1}, x);
    clg_tensor *ty = clg_test_tensor(ctx, (clg_shape){n, 1, 1, 1}, NULL);
    CLG_ASSERT_STATUS(clg_dropout_forward(ctx, 0.3f, 99, 7, tx, ty), CLG_OK);
    CLG_ASSERT_STATUS(clg_tensor_download(ty, whole, n), CLG_OK);
    const size_t cuts[] = {0, 1, 6, 7, 500, 1001, 1003};
    for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
        size_t first = cuts[c], count = cuts[c + 1] - first;
        clg_tensor *sx = clg_test_tensor(ctx, (clg_shape){count, 1, 1, 1}, x + first);
        clg_tensor *sy = clg_test_tensor(ctx, (clg_shape){count, 1, 1, 1}, NULL);
        CLG_ASSERT_STATUS(clg__dropout(ctx, 0, 0.3f, 99, 7, first, sx, sy), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_download(sy, parts + first, count), CLG_OK);
        clg_tensor_destroy(sx);
        clg_tensor_destroy(sy);
    }
    assert_memory_equal(whole, parts, n * sizeof *whole);
    clg_tensor_destroy(tx);
    clg_tensor_destroy(ty);
    free(x);
    free(whole);
    free(parts);
}

/* n: below, at and past the 16 elements a CPU work-item updates at once */
static void optimizers_agree(size_t n)
{
    const clg_sgd_params sgds[] = {{sizeof(clg_sgd_params), 0.05f, 0.0f, 0.0f, 0},
                                 {sizeof(clg_sgd_params), 0.05f, 0.9f, 1e-4f, 0},
                                 {sizeof(clg_sgd_params), 0.05f, 0.9f, 5e-4f, 1}};
    for (int which = 0; which < 6; which++) { /* 3 SGD, Adam, AdamW, RMSProp */
        float *w = malloc(n * sizeof *w), *g = malloc(n * sizeof *g), *m = calloc(n, sizeof *m);
        float *v = calloc(n, sizeof *v), *dw = malloc(n * sizeof *dw), *prev = malloc(n * sizeof *prev);
        double *path = malloc(n * sizeof *path); /* |w0| + the sum of |each step's change| */
        clg_test_fill_uniform(&rng, w, n, -1, 1);
        for (size_t i = 0; i < n; i++)
            path[i] = fabs(w[i]);
        clg_tensor *tw, *tg, *tm, *tv;
        clg_shape s = {n, 1, 1, 1};
        CLG_ASSERT_STATUS(clg_tensor_create(ctx, s, &tw), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_create(ctx, s, &tg), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_create(ctx, s, &tm), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_create(ctx, s, &tv), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_upload(tw, w, n), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_fill(tm, 0.0f), CLG_OK);
        CLG_ASSERT_STATUS(clg_tensor_fill(tv, 0.0f), CLG_OK);
        for (unsigned long t = 1; t <= 100; t++) {
            clg_test_fill_uniform(&rng, g, n, -1, 1); /* a fresh "gradient" each step */
            CLG_ASSERT_STATUS(clg_tensor_upload(tg, g, n), CLG_OK);
            memcpy(prev, w, n * sizeof *w);
            if (which < 3) {
                CLG_ASSERT_STATUS(clg_sgd_step(ctx, &sgds[which], tw, tg, tv), CLG_OK);
                CLG_ASSERT_STATUS(clg_sgd_step_host(&sgds[which], w, g, v, n), CLG_OK);
            } else if (which == 5) {
                clg_rmsprop_params r = {sizeof(clg_rmsprop_params), 1e-3f, 0.9f, 1e-8f, 1e-3f};
                CLG_ASSERT_STATUS(clg_rmsprop_step(ctx, &r, tw, tg, tv), CLG_OK);
                CLG_ASSERT_STATUS(clg_rmsprop_step_host(&r, w, g, v, n), CLG_OK);
            } else {
                clg_adam_params a = {sizeof(clg_adam_params), 1e-3f, 0.9f, 0.999f, 1e-8f, 1e-2f,
                                     which == 4, t};
                CLG_ASSERT_STATUS(clg_adam_step(ctx, &a, tw, tg, tm, tv), CLG_OK);
                CLG_ASSERT_STATUS(clg_adam_step_host(&a, w, g, m, v, n), CLG_OK);
            }
            for (size_t i = 0; i < n; i++)
                path[i] += fabs((double)w[i] - prev[i]);
        }
        CLG_ASSERT_STATUS(clg_tensor_download(tw, dw, n), CLG_OK);
        double num = 0, den = 0;
        for (size_t i = 0; i < n; i++) {
            num += ((double)dw[i] - w[i]) * ((double)dw[i] - w[i]);
            den += path[i] * path[i];
        }
        /* Same formulas; only contraction into fma may differ. Each step rounds at the size of
           the weight and of its change, so the error is measured against the path the weights
           took, not the final weights: with one weight that ends near zero (seen with n = 1,
           momentum) the final value is no scale for 100 steps of rounding. */
        if (sqrt(num / den) > 1e-5)
            fail_msg("optimizer %d n %zu: device and host differ by %g", which, n, sqrt(num / den));
        clg_tensor_destroy(tw);
        clg_tensor_destroy(tg);
        clg_tensor_destroy(tm);
        clg_tensor_destroy(tv);
        free(w);
        free(g);
        free(m);
        free(v);
        free(dw);
        free(prev);
        free(path);
    }
}

static void device_and_host_optimizers_agree_over_100_steps(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 7, 16, 33, 1031};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        optimizers_agree(sizes[i]);
}

/* One host step against the formulas in double. */
static void host_steps_follow_the_formulas(void **state)
{
    (void)state;
    float w[3] = {1, -2, 0.5f}, g[3] = {0.1f, 0.2f, -0.3f}, v[3] = {0.01f, 0, -0.02f}, m[3] = {0, 0.1f, 0};
    clg_sgd_params s = {sizeof(clg_sgd_params), 0.1f, 0.9f, 0.01f, 1};
    float w1[3], v1[3];
    memcpy(w1, w, sizeof w);
    memcpy(v1, v, sizeof v);
    CLG_ASSERT_STATUS(clg_sgd_step_host(&s, w1, g, v1, 3), CLG_OK);
    for (int i = 0; i < 3; i++) {
        double d = g[i] + 0.01 * w[i], vv = 0.9 * v[i] + d, ww = w[i] - 0.1 * (d + 0.9 * vv);
        assert_true(fabs(v1[i] - vv) < 1e-7 && fabs(w1[i] - ww) < 1e-6);
    }
    clg_adam_params a = {sizeof(clg_adam_params), 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, 1, 3};
    float w2[3], m2[3], v2[3];
    memcpy(w2, w, sizeof w);
    memcpy(m2, m, sizeof m);
    memcpy(v2, v, sizeof v);
    v2[2] = 0.02f;
    CLG_ASSERT_STATUS(clg_adam_step_host(&a, w2, g, m2, v2, 3), CLG_OK);
    for (int i = 0; i < 3; i++) {
        double wi = w[i] - 0.01 * 0.1 * w[i];
        double mi = 0.9 * m[i] + 0.1 * g[i], vi = 0.999 * (i == 2 ? 0.02 : v[i]) + 0.001 * g[i] * g[i];
        double want = wi - 0.01 * (mi / (1 - pow(0.9, 3))) / (sqrt(vi / (1 - pow(0.999, 3))) + 1e-8);
        assert_true(fabs(w2[i] - want) < 1e-6);
    }
    clg_rmsprop_params r = {sizeof(clg_rmsprop_params), 0.01f, 0.9f, 1e-8f, 0.05f}; /* no gradient cancels to ~0 */
    float w3[3], v3[3];
    memcpy(w3, w, sizeof w);
    memcpy(v3, v, sizeof v);
    v3[2] = 0.02f;
    CLG_ASSERT_STATUS(clg_rmsprop_step_host(&r, w3, g, v3, 3), CLG_OK);
    for (int i = 0; i < 3; i++) {
        double gi = g[i] + 0.05 * w[i], vi = 0.9 * (i == 2 ? 0.02 : v[i]) + 0.1 * gi * gi;
        assert_true(fabs(v3[i] - vi) < 1e-7);
        assert_true(fabs(w3[i] - (w[i] - 0.01 * gi / (sqrt(vi) + 1e-8))) < 1e-6);
    }
    clg_rmsprop_params bad_r = {sizeof(clg_rmsprop_params), 0.01f, 1.0f, 1e-8f, 0};
    CLG_ASSERT_STATUS(clg_rmsprop_step_host(&bad_r, w, g, v, 3), CLG_ERR_INVALID_ARG);
    clg_sgd_params bad = {sizeof(clg_sgd_params), 0.1f, 0.0f, 0.0f, 1};
    CLG_ASSERT_STATUS(clg_sgd_step_host(&bad, w, g, v, 3), CLG_ERR_INVALID_ARG);
    clg_adam_params bad_a = {sizeof(clg_adam_params), 0.01f, 1.0f, 0.999f, 1e-8f, 0, 0, 1};
    CLG_ASSERT_STATUS(clg_adam_step_host(&bad_a, w, g, m, v, 3), CLG_ERR_INVALID_ARG);
    bad_a.beta1 = 0.9f;
    bad_a.step = 0;
    CLG_ASSERT_STATUS(clg_adam_step_host(&bad_a, w, g, m, v, 3), CLG_ERR_INVALID_ARG);
}

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(philox_known_answers),
        cmocka_unit_test(dropout_mask_is_philox_and_deterministic),
        cmocka_unit_test(shards_draw_the_whole_batch_mask),
        cmocka_unit_test(device_and_host_optimizers_agree_over_100_steps),
        cmocka_unit_test(host_steps_follow_the_formulas),
    };
    clg_test_apply_filters();
    return cmocka_run_group_tests(tests, setup, teardown);
}
