/* The progress display of clgrad-train (table, progress bar, plot). */
#ifndef CLGRAD_TRAIN_DISPLAY_H
#define CLGRAD_TRAIN_DISPLAY_H

#include <pthread.h>

#include "clgrad/clgrad.h"
#include "train_plot.h"

typedef struct display {
    int quiet;              /* no table or bar */
    int tty;                /* a progress bar under the table */
    size_t table_every;     /* a table row every this many iterations */
    size_t batch;           /* images per iteration, for images/s */
    const char *plot_path;  /* PNG redrawn every epoch, or NULL */
    const char *log_path;   /* the metrics log: a resumed run's plot starts from it */
    clg_datastore *skips;   /* a store whose skipped files are reported every epoch, or NULL */
    char title[160];
    plot_data plot;
    double last_t;
    size_t last_it, max_it;
    size_t val_every;       /* validations every this many iterations (and at the end), or 0 */
    clg_task task;          /* the accuracy column: accuracy, pixel accuracy, or RMSE */
    int bar_shown;          /* columns the progress bar takes, 0 when none is shown */
    int plot_failed;        /* said once; no more tries */
    int phase;              /* 0 before the table (its header waits for its first line), 1 in
                               it, 2 after it */
    int build_line;         /* "Building OpenCL kernels..." is open on the terminal */
    int build_lines;        /* such lines so far */
    double build_total;     /* seconds of kernel compiles so far */
    pthread_mutex_t lock;   /* progress (main thread) and builds (device threads) print */
} display;

/* Sets up d (its lock); display_free ends it. */
void display_init(display *d);
void display_free(display *d);

/* clg_ctx_options.on_build (user: the display): outside the table, one line naming each kernel
 * family as its first-run compile ends; in it, a note per compile. */
void display_build(void *user, const char *family, double seconds);

/* Ends an open "Building OpenCL kernels" line, before other output. */
void display_close_builds(display *d);

/* The clg_train progress callback (user: the display). */
int display_progress(const clg_train_progress *p, void *user);
void display_table_header(clg_task task);
/* A line in the table (checkpoints, device splits, skipped files), closed by a bar. */
void display_note(display *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Erases the progress bar before other output. */
void display_clear_bar(display *d);

#endif
