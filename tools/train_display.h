/* The progress display of clgrad-train (table, progress bar, plot). */
#ifndef CLGRAD_TRAIN_DISPLAY_H
#define CLGRAD_TRAIN_DISPLAY_H

#include "clgrad/clgrad.h"
#include "train_plot.h"

typedef struct display {
    int quiet;              /* no table or bar */
    int tty;                /* a progress bar under the table */
    size_t table_every;     /* a table row every this many iterations */
    size_t batch;           /* images per iteration, for images/s */
    const char *plot_path;  /* PNG redrawn every epoch, or NULL */
    clg_datastore *skips;   /* a store whose skipped files are reported every epoch, or NULL */
    char title[160];
    plot_data plot;
    double last_t;
    size_t last_it, max_it;
    size_t val_every;       /* validations every this many iterations (and at the end), or 0 */
    int bar_shown;          /* columns the progress bar takes, 0 when none is shown */
    int plot_failed;        /* said once; no more tries */
} display;

/* The clg_train progress callback (user: the display). */
int display_progress(const clg_train_progress *p, void *user);
void display_table_header(void);
/* A line in the table (checkpoints, device splits, skipped files), closed by a bar. */
void display_note(display *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Erases the progress bar before other output. */
void display_clear_bar(display *d);

#endif
