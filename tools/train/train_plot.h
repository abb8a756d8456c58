/* The training-progress plot of clgrad-train (cairo): accuracy and loss against iterations. */
#ifndef CLGRAD_TRAIN_PLOT_H
#define CLGRAD_TRAIN_PLOT_H

#include <stddef.h>

typedef struct plot_point {
    double iteration, value;
} plot_point;

typedef struct plot_series {
    plot_point *p;
    size_t n, cap;
} plot_series;

typedef struct plot_data {
    plot_series loss, acc, val_loss, val_acc;
    double *epoch_ends;  /* iterations where epochs ended */
    size_t epochs, epochs_cap;
    double max_iteration;
    int error_metric;    /* the top panel is an error (RMSE) on its own scale, not accuracy */
} plot_data;

/* Appends a point; returns 0 when out of memory. */
int plot_add(plot_series *s, double iteration, double value);
int plot_add_epoch(plot_data *d, double iteration);
void plot_free(plot_data *d);

/* The exponential smoothing of a training curve of n points: light for short runs, at most
 * 0.9 (MATLAB's). */
double plot_smoothing(size_t n);

/* The top of the loss axis: the training losses' 98th percentile (an early spike is cut off)
 * or the highest validation loss, with a margin. */
double plot_loss_top(const plot_series *train, const plot_series *val);

/* Draws the plot into a PNG at path (written to a temporary name, then renamed, so a viewer
 * never sees half a file). Returns 0 and a reason in err on failure. */
int plot_write_png(const plot_data *d, const char *path, const char *title, char *err,
                   size_t err_cap);

/* A K x K confusion matrix (counts[true * K + predicted]) as a heat map: each cell shaded by
 * its share of its true class's samples, with its count; class names on both axes. */
int plot_confusion_png(const char *const *names, size_t K, const size_t *counts,
                       const char *path, const char *title, char *err, size_t err_cap);

/* One smoothed training curve per model (accuracy on top, loss below) on the same axes, with
 * validation accuracy and loss as dots in the model's colour and a legend of the names. */
int plot_write_models_png(const plot_data *models, const char *const *names, size_t n,
                          const char *path, const char *title, char *err, size_t err_cap);

#endif
