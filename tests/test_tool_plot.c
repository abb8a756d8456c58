/* clgrad-train's plot: smoothing that follows the run's length, and a loss axis fitted to the
 * data rather than to the first steps' spike. */
#include <cairo.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/testutil.h"
#include "train_plot.h"

static void smoothing_follows_the_run(void **state)
{
    (void)state;
    assert_true(plot_smoothing(8) == 0.0);          /* a few points: raw */
    assert_true(plot_smoothing(24) < 0.5);
    assert_true(plot_smoothing(300) == 0.9);        /* long runs: MATLAB's */
    for (size_t n = 1; n < 5000; n += 7)             /* never less for more points */
        assert_true(plot_smoothing(n + 7) >= plot_smoothing(n));
}

static void loss_axis_fits_the_data(void **state)
{
    (void)state;
    plot_data d = {0};
    for (int i = 1; i <= 200; i++) /* a spike of 9 in the first steps, then about 0.5 */
        assert_true(plot_add(&d.loss, i, i < 3 ? 9.0 : 0.5 + 0.001 * (i % 7)));
    double top = plot_loss_top(&d.loss, &d.val_loss);
    assert_true(top > 0.506 && top < 1.0);
    assert_true(plot_add(&d.val_loss, 100, 1.5)); /* every validation point stays in view */
    top = plot_loss_top(&d.loss, &d.val_loss);
    assert_true(top >= 1.5 && top < 2.0);
    plot_free(&d);
    plot_data empty = {0};
    assert_true(plot_loss_top(&empty.loss, &empty.val_loss) > 0.0);
}

/* Pixels of colour (r, g, b) in rows [y0, y1) of a PNG (to within 2 of 255 per channel). */
static size_t pixels_of(const char *path, int y0, int y1, int r, int g, int b)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    const unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s), w = cairo_image_surface_get_width(s);
    size_t n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            uint32_t p = *(const uint32_t *)(data + (size_t)y * (size_t)stride + 4 * (size_t)x);
            n += abs((int)(p >> 16 & 255) - r) <= 2 && abs((int)(p >> 8 & 255) - g) <= 2 &&
                 abs((int)(p & 255) - b) <= 2;
        }
    cairo_surface_destroy(s);
    return n;
}

/* A sweep's plot: each model's validation accuracy (top panel) and loss (bottom panel) as
 * dots in its own colour (the legend's), not black, so that one can tell whose they are. */
static void sweep_validation_dots_wear_their_models_colour(void **state)
{
    (void)state;
    plot_data m[2];
    memset(m, 0, sizeof m);
    for (int k = 0; k < 2; k++) {
        m[k].max_iteration = 100;
        for (int i = 1; i <= 4; i++) { /* validation only: no training curve to confuse */
            assert_true(plot_add(&m[k].val_acc, 25.0 * i, 0.5 + 0.1 * k));
            assert_true(plot_add(&m[k].val_loss, 25.0 * i, 1.0 - 0.3 * k));
        }
    }
    const char *names[2] = {"first", "second"};
    char path[] = "/tmp/clgrad-test-plot-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_true(plot_write_models_png(m, names, 2, path, "sweep", err, sizeof err));
    /* the first two colours of the plot's palette, as 8-bit values */
    static const int colour[2][3] = {{31, 120, 181}, {255, 128, 13}};
    for (int k = 0; k < 2; k++) {
        size_t acc = pixels_of(path, 45, 295, colour[k][0], colour[k][1], colour[k][2]);
        size_t loss = pixels_of(path, 345, 595, colour[k][0], colour[k][1], colour[k][2]);
        print_message("%s: %zu accuracy and %zu loss dot pixels in its colour\n", names[k], acc,
                      loss);
        assert_true(acc >= 4 * 9);  /* four dots of radius 3.5: dozens of pixels each */
        assert_true(loss >= 4 * 9);
    }
    remove(path);
    plot_free(&m[0]);
    plot_free(&m[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(smoothing_follows_the_run),
        cmocka_unit_test(loss_axis_fits_the_data),
        cmocka_unit_test(sweep_validation_dots_wear_their_models_colour),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
