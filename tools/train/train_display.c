/* clgrad-train's progress display: a table like MATLAB's trainNetwork, a progress bar with
 * images/s and time left on a terminal, and the plot redrawn every epoch. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "train_display.h"

static void hms(double s, char *buf, size_t cap)
{
    long t = (long)s;
    snprintf(buf, cap, "%02ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void display_clear_bar(display *d)
{
    if (d->bar_shown) {
        printf("\r%*s\r", d->bar_shown, "");
        d->bar_shown = 0;
    }
}

#define TABLE_WIDTH 120 /* every row and rule, bars included */

static const char rule[] =
    "|======================================================================================================================|\n";

void display_note(display *d, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    display_clear_bar(d);
    printf("| %-*s |\n", TABLE_WIDTH - 4, text); /* a long note pushes the bar out */
}

/* Columns the progress bar may take: the terminal's, less one (no wrap at the edge). */
static int bar_columns(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
        return ws.ws_col - 1;
    return 79;
}

void display_table_header(clg_task task)
{
    /* MATLAB's columns; a regression's figure is its RMSE, a segmentation's its pixels' */
    const char *fig = task == CLG_TASK_REGRESSION     ? "    RMSE    "
                      : task == CLG_TASK_SEGMENTATION ? " Pixel Acc. "
                                                      : "  Accuracy  ";
    printf("%s", rule);
    printf("|  Epoch  |  Iteration  |  Time Elapsed  |  Mini-batch  |  Validation  |  Mini-batch  |  Validation  |  Base Learning  |\n"
           "|         |             |   (hh:mm:ss)   | %s | %s |     Loss     |     Loss     |      Rate       |\n", fig, fig);
    printf("%s", rule);
}

/* The figure in a 12-character cell: a percentage, or an error as a number. */
static void figure(char *out, size_t cap, clg_task task, double v)
{
    if (task == CLG_TASK_REGRESSION)
        snprintf(out, cap, "%.5f", v);
    else
        snprintf(out, cap, "%.2f%%", 100 * v);
}

static void table_row(const clg_train_progress *p, int with_val, clg_task task)
{
    char t[32], a[32], va[32] = "", vl[16] = "";
    hms(p->elapsed_s, t, sizeof t);
    figure(a, sizeof a, task, p->accuracy);
    if (with_val && p->has_validation) {
        figure(va, sizeof va, task, p->val_accuracy);
        snprintf(vl, sizeof vl, "%.4f", p->val_loss);
    }
    printf("| %7d | %11zu | %14s | %12s | %12s | %12.4f | %12s | %15.4g |\n", p->epoch,
           p->iteration, t, a, va, p->loss, vl, p->learn_rate);
}

static void redraw_plot(display *d)
{
    char err[512];
    if (d->plot_path && !d->plot_failed &&
        !plot_write_png(&d->plot, d->plot_path, d->title, err, sizeof err)) {
        display_clear_bar(d);
        fprintf(stderr, "clgrad-train: --plot %s: %s (no more tries this run)\n", d->plot_path,
                err);
        d->plot_failed = 1;
    }
}

void display_init(display *d)
{
    pthread_mutex_init(&d->lock, NULL);
}

void display_free(display *d)
{
    pthread_mutex_destroy(&d->lock);
}

static void close_builds(display *d)
{
    if (d->build_line) {
        printf(" (%.1f s)\n", d->build_total);
        d->build_line = 0;
        d->build_total = 0;
    }
}

void display_close_builds(display *d)
{
    pthread_mutex_lock(&d->lock);
    close_builds(d);
    fflush(stdout);
    pthread_mutex_unlock(&d->lock);
}

/* Ends the open "Building OpenCL kernels" line, then prints the header if it waits. */
static void begin_table(display *d)
{
    close_builds(d);
    if (d->phase == 0) {
        if (!d->quiet)
            display_table_header(d->task);
        d->phase = 1;
    }
}

void display_build(void *user, const char *family, double seconds)
{
    display *d = user;
    if (d->quiet)
        return;
    pthread_mutex_lock(&d->lock);
    if (seconds == 0.0 && d->phase != 1 && !d->build_line) {
        if (d->build_lines++)
            printf("Building more OpenCL kernels:");
        else
            printf("Building OpenCL kernels (first run with these kernels on this device; "
                   "later runs load them from the cache):");
        d->build_line = 1;
    }
    int tuning = strcmp(family, "tuning") == 0; /* CLGRAD_TUNE=quick on a new device */
    if (seconds > 0.0) {
        d->build_total += seconds;
        if (d->build_line && tuning)
            printf(" [GEMM tuned for this device in %.0f s, stored for later runs]", seconds);
        else if (d->build_line)
            printf(" %s", family);
        else if (d->phase == 1)
            display_note(d, "built the OpenCL kernels of %s in %.1f s (first run; cached for "
                         "later runs)", family, seconds);
    }
    fflush(stdout);
    pthread_mutex_unlock(&d->lock);
}

static int progress_locked(const clg_train_progress *p, display *d);

/* Field k (0-based) of a CSV line, or NULL. */
static const char *field(const char *line, int k)
{
    for (; line && k > 0; k--)
        line = strchr(line, ',') ? strchr(line, ',') + 1 : NULL;
    return line;
}

/* The plot's points up to the checkpoint's iteration from the metrics log of the run being
 * resumed (the library keeps the log to one run's rows). Returns the points read. */
static size_t plot_history(display *d, const clg_train_progress *p)
{
    FILE *f = d->log_path ? fopen(d->log_path, "r") : NULL;
    if (!f)
        return 0;
    char line[1024];
    size_t points = 0;
    int epoch_was = 0;
    double last_it = 0;
    while (fgets(line, sizeof line, f)) {
        char kind[32];
        int epoch;
        unsigned long long it;
        double x, y;
        /* kind,epoch,iteration,elapsed_s,loss,accuracy,val_loss,val_accuracy,learn_rate */
        if (sscanf(line, "%31[a-z],%d,%llu,", kind, &epoch, &it) != 3 || it > p->iteration)
            continue;
        int train = !strcmp(kind, "iteration");
        const char *v = field(line, train ? 4 : 6);
        if (!v || sscanf(v, "%lf,%lf", &x, &y) != 2)
            continue;
        if (train) {
            if (epoch_was && epoch != epoch_was)
                plot_add_epoch(&d->plot, last_it);
            epoch_was = epoch, last_it = (double)it;
        }
        plot_add(train ? &d->plot.loss : &d->plot.val_loss, (double)it, x);
        plot_add(train ? &d->plot.acc : &d->plot.val_acc, (double)it, y);
        points++;
    }
    fclose(f);
    if (points && p->iterations_per_epoch && p->iteration % p->iterations_per_epoch == 0)
        plot_add_epoch(&d->plot, (double)p->iteration); /* the checkpoint ended an epoch */
    return points;
}

static void resumed(display *d, const clg_train_progress *p)
{
    close_builds(d);
    size_t points = d->plot_path ? plot_history(d, p) : 0;
    if (d->quiet)
        return;
    printf("Resumed from %s: %zu iteration%s done, going on with epoch %d of %d\n", p->text,
           p->iteration, p->iteration == 1 ? "" : "s", p->epoch, p->max_epochs);
    if (d->plot_path)
        printf("Plot title: %s\n", d->title);
    if (d->plot_path && points)
        printf("The plot goes on from the %zu points before the checkpoint in %s\n", points,
               d->log_path);
    else if (d->plot_path)
        printf("The plot starts at the checkpoint (--log with the first run's metrics log "
               "draws what came before)\n");
}

int display_progress(const clg_train_progress *p, void *user)
{
    display *d = user;
    pthread_mutex_lock(&d->lock);
    if (p->kind == CLG_PROGRESS_RESUME_SKIPPED || p->kind == CLG_PROGRESS_RESUMED) {
        if (p->kind == CLG_PROGRESS_RESUMED) /* before the table */
            resumed(d, p);
        else /* even when quiet */
            fprintf(stderr, "clgrad-train: warning: passed over checkpoints that do not load: "
                    "%s\n", p->text);
        fflush(stdout);
        pthread_mutex_unlock(&d->lock);
        return 0;
    }
    begin_table(d);
    int rc = progress_locked(p, d);
    pthread_mutex_unlock(&d->lock);
    return rc;
}

/* "epoch E: skipped N undecodable files: a, b, c and K more" (every bad file known so far). */
static void skipped_note(display *d, int epoch, size_t found)
{
    char names[512] = "";
    size_t len = 0, all = 0;
    for (const char *f; (f = clg_datastore_skipped_file(d->skips, all)) != NULL; all++)
        if (all < 3 && len < sizeof names) {
            const char *base = strrchr(f, '/');
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", all ? ", " : "",
                                    base ? base + 1 : f);
        }
    char more[48] = "";
    if (all > 3)
        snprintf(more, sizeof more, " and %zu more", all - 3);
    display_note(d, "epoch %d: %zu undecodable file%s found and skipped (%zu in all: %s%s)",
                 epoch, found, found == 1 ? "" : "s", all, names, more);
}

static int progress_locked(const clg_train_progress *p, display *d)
{
    d->max_it = (size_t)p->max_epochs * p->iterations_per_epoch;
    d->plot.max_iteration = (double)d->max_it;
    switch (p->kind) {
    case CLG_PROGRESS_ITERATION:
        plot_add(&d->plot.loss, (double)p->iteration, p->loss);
        plot_add(&d->plot.acc, (double)p->iteration, p->accuracy);
        if (d->quiet)
            break;
        /* a row where a validation follows at the same iteration is the validation's row */
        int validated = d->val_every && (p->iteration % d->val_every == 0 ||
                                         p->iteration == d->max_it);
        if (!validated &&
            (p->iteration == 1 || p->iteration % d->table_every == 0 || p->iteration == d->max_it)) {
            display_clear_bar(d);
            table_row(p, 0, d->task);
        }
        if (d->tty) {
            double now = p->elapsed_s;
            if (now - d->last_t >= 0.5 || p->iteration == d->max_it) {
                double ips = (double)(p->iteration - d->last_it) * (double)d->batch /
                             (now - d->last_t + 1e-9); /* images/s since the last redraw */
                char eta[32];
                size_t left = d->max_it > p->iteration ? d->max_it - p->iteration : 0;
                hms(ips > 0 ? (double)left * (double)d->batch / ips : 0, eta, sizeof eta);
                char text[160];
                int len = snprintf(text, sizeof text, " epoch %d/%d  iteration %zu/%zu  %.0f "
                                   "images/s  ETA %s", p->epoch, p->max_epochs, p->iteration,
                                   d->max_it, ips, eta);
                int cols = bar_columns(), width = cols - len - 2; /* the rest is the bar */
                if (width > 40)
                    width = 40;
                if (width < 5) { /* a narrow terminal: the text alone, cut to fit */
                    width = 0;
                    len = len < cols ? len : cols;
                }
                int fill = (int)((double)width * (double)p->iteration /
                                 (double)(d->max_it ? d->max_it : 1));
                display_clear_bar(d);
                if (width)
                    printf("[%.*s%*s]", fill, "########################################",
                           width - fill, "");
                printf("%.*s", len, text);
                fflush(stdout);
                d->bar_shown = (width ? width + 2 : 0) + len;
                d->last_t = now;
                d->last_it = p->iteration;
            }
        }
        break;
    case CLG_PROGRESS_VALIDATION:
        plot_add(&d->plot.val_loss, (double)p->iteration, p->val_loss);
        plot_add(&d->plot.val_acc, (double)p->iteration, p->val_accuracy);
        if (!d->quiet) {
            display_clear_bar(d);
            table_row(p, 1, d->task);
        }
        break;
    case CLG_PROGRESS_EPOCH:
        if (d->skips) {
            size_t n = clg_datastore_skipped(d->skips, 1);
            if (n) /* each bad file once: the store does not decode it again */
                skipped_note(d, p->epoch - 1, n);
        }
        if (!d->quiet && p->devices > 1 && p->split) {
            char text[2048];
            size_t len = (size_t)snprintf(text, sizeof text, "mini-batch split over %zu devices:",
                                          p->devices);
            for (size_t i = 0; i < p->devices && len < sizeof text; i++)
                len += (size_t)snprintf(text + len, sizeof text - len, " %zu", p->split[i]);
            if (p->device_ms && len < sizeof text) {
                len += (size_t)snprintf(text + len, sizeof text - len, " samples, last step");
                for (size_t i = 0; i < p->devices && len < sizeof text; i++)
                    len += (size_t)snprintf(text + len, sizeof text - len, " %.1f",
                                            p->device_ms[i]);
                if (len < sizeof text)
                    snprintf(text + len, sizeof text - len, " ms");
            }
            display_note(d, "%s", text);
        }
        plot_add_epoch(&d->plot, (double)p->iteration);
        redraw_plot(d);
        break;
    case CLG_PROGRESS_RESUMED: /* display_progress */
    case CLG_PROGRESS_RESUME_SKIPPED:
        break;
    case CLG_PROGRESS_DEVICE_FAULT:
        display_note(d, "device fault at iteration %zu: %s", p->iteration, p->text);
        break;
    case CLG_PROGRESS_CHECKPOINT:
        if (!d->quiet)
            display_note(d, "checkpoint: %s", p->text);
        break;
    case CLG_PROGRESS_CHECKPOINT_FAILED: /* even when quiet: work the user asked for is lost */
        display_clear_bar(d);
        fprintf(stderr, "clgrad-train: warning: iteration %zu: checkpoint not written, training "
                "goes on: %s\n", p->iteration, p->text);
        break;
    case CLG_PROGRESS_DONE:
        if (!d->quiet) {
            display_clear_bar(d);
            printf("%s", rule);
        }
        d->phase = 2;
        redraw_plot(d);
        break;
    }
    fflush(stdout);
    return 0;
}
