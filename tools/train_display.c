/* clgrad-train's progress display: a table like MATLAB's trainNetwork, a progress bar with
 * images/s and time left on a terminal, and the plot redrawn every epoch. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "train_display.h"

static void hms(double s, char *buf, size_t cap)
{
    long t = (long)s;
    snprintf(buf, cap, "%02ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void display_clear_bar(display *d)
{
    if (d->bar_shown) {
        printf("\r%*s\r", 100, "");
        d->bar_shown = 0;
    }
}

static const char rule[] =
    "|===========================================================================================================|\n";

void display_table_header(void)
{
    printf("%s", rule);
    printf("|  Epoch  |  Iteration  |  Time Elapsed  |  Mini-batch  |  Validation  |  Mini-batch  |  Validation  |  Base Learning  |\n"
           "|         |             |   (hh:mm:ss)   |   Accuracy   |   Accuracy   |     Loss     |     Loss     |      Rate       |\n");
    printf("%s", rule);
}

static void table_row(const clg_train_progress *p, int with_val)
{
    char t[32], va[16] = "", vl[16] = "";
    hms(p->elapsed_s, t, sizeof t);
    if (with_val && p->has_validation) {
        snprintf(va, sizeof va, "%.2f%%", 100 * p->val_accuracy);
        snprintf(vl, sizeof vl, "%.4f", p->val_loss);
    }
    printf("| %7d | %11zu | %14s | %11.2f%% | %12s | %12.4f | %12s | %15.4g |\n", p->epoch,
           p->iteration, t, 100 * p->accuracy, va, p->loss, vl, p->learn_rate);
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

int display_progress(const clg_train_progress *p, void *user)
{
    display *d = user;
    d->max_it = (size_t)p->max_epochs * p->iterations_per_epoch;
    d->plot.max_iteration = (double)d->max_it;
    switch (p->kind) {
    case CLG_PROGRESS_ITERATION:
        plot_add(&d->plot.loss, (double)p->iteration, p->loss);
        plot_add(&d->plot.acc, (double)p->iteration, p->accuracy);
        if (d->quiet)
            break;
        if (p->iteration == 1 || p->iteration % d->table_every == 0 || p->iteration == d->max_it) {
            display_clear_bar(d);
            table_row(p, 0);
        }
        if (d->tty) {
            double now = p->elapsed_s;
            if (now - d->last_t >= 0.5 || p->iteration == d->max_it) {
                double ips = (double)(p->iteration - d->last_it) * (double)d->batch /
                             (now - d->last_t + 1e-9); /* images/s since the last redraw */
                char eta[32];
                size_t left = d->max_it > p->iteration ? d->max_it - p->iteration : 0;
                hms(ips > 0 ? (double)left * (double)d->batch / ips : 0, eta, sizeof eta);
                int fill = (int)(30.0 * (double)p->iteration / (double)(d->max_it ? d->max_it : 1));
                printf("\r[%.*s%*s] epoch %d/%d  iteration %zu/%zu  %.0f images/s  ETA %s ", fill,
                       "##############################", 30 - fill, "", p->epoch, p->max_epochs,
                       p->iteration, d->max_it, ips, eta);
                fflush(stdout);
                d->bar_shown = 1;
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
            table_row(p, 1);
        }
        break;
    case CLG_PROGRESS_EPOCH:
        if (d->skips) {
            display_clear_bar(d);
            printf("| epoch %d: skipped %zu files\n", p->epoch - 1, clg_datastore_skipped(d->skips, 1));
        }
        if (!d->quiet && p->devices > 1 && p->split) {
            display_clear_bar(d);
            printf("| mini-batch split over %zu devices:", p->devices);
            for (size_t i = 0; i < p->devices; i++)
                printf(" %zu", p->split[i]);
            if (p->device_ms) {
                printf(" samples, last step");
                for (size_t i = 0; i < p->devices; i++)
                    printf(" %.1f", p->device_ms[i]);
                printf(" ms");
            }
            printf("\n");
        }
        plot_add_epoch(&d->plot, (double)p->iteration);
        redraw_plot(d);
        break;
    case CLG_PROGRESS_DEVICE_FAULT:
        display_clear_bar(d);
        printf("| device fault at iteration %zu: %s\n", p->iteration, p->text);
        break;
    case CLG_PROGRESS_CHECKPOINT:
        if (!d->quiet) {
            display_clear_bar(d);
            printf("| checkpoint: %s\n", p->text);
        }
        break;
    case CLG_PROGRESS_DONE:
        if (!d->quiet) {
            display_clear_bar(d);
            printf("%s", rule);
        }
        redraw_plot(d);
        break;
    }
    fflush(stdout);
    return 0;
}
