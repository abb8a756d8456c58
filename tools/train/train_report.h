/* clgrad-train --evaluate: accuracy, the confusion matrix and per-class figures, as text, as
 * JSON, and as a heat map (MATLAB's confusionchart). */
#ifndef CLGRAD_TRAIN_REPORT_H
#define CLGRAD_TRAIN_REPORT_H

#include <stddef.h>

#include "clgrad/clgrad.h"
#include "train_display.h"

/* "Test accuracy: 90.19% (10000 images), test loss 0.2700", the line tests and users read. */
void report_accuracy(double accuracy, size_t images, double loss);

/* Evaluates net on test and prints the report (json: one JSON object instead of text);
 * plot_path, when not NULL, gets the heat map. Returns the exit status. */
int report_evaluation(clg_net *net, clg_datastore *test, int json, const char *plot_path,
                      display *d);

#endif
