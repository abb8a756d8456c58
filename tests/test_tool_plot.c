/* clgrad-train's plot: smoothing that follows the run's length, and a loss axis fitted to the
 * data rather than to the first steps' spike. */
#include <math.h>
#include <stdlib.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(smoothing_follows_the_run),
        cmocka_unit_test(loss_axis_fits_the_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
