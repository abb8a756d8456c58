/* clgrad-train --sweep: several experiments at once over the devices. */
#ifndef CLGRAD_TRAIN_SWEEP_H
#define CLGRAD_TRAIN_SWEEP_H

#include "clgrad/clgrad.h"
#include "train_args.h"

/* Runs the experiments of file (NAME NET|default [options] a line; the options of the command
 * line argv, then the line's) over ctxs, all reading train (and val) through shared views;
 * prints the live and ranked tables (test accuracy on test), writes base->results (CSV) and
 * base->plot. Returns the exit code: 0, 1 when any experiment failed, 2 for a bad file. */
int sweep_run(const char *file, int argc, char **argv, clg_ctx *const *ctxs, size_t nctx,
              clg_datastore *train, clg_datastore *val, clg_datastore *test, const cli *base);

#endif
