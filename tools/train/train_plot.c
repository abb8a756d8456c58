/* Training-progress curves drawn with cairo: accuracy on top, loss below; training values
 * light and smoothed, validation as points joined by a dashed line, epochs as vertical lines. */
#include "train_plot.h"

#include <cairo/cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

int plot_add(plot_series *s, double iteration, double value)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        plot_point *p = realloc(s->p, cap * sizeof *p);
        if (!p)
            return 0;
        s->p = p;
        s->cap = cap;
    }
    s->p[s->n++] = (plot_point){iteration, value};
    return 1;
}

int plot_add_epoch(plot_data *d, double iteration)
{
    if (d->epochs == d->epochs_cap) {
        size_t cap = d->epochs_cap ? 2 * d->epochs_cap : 16;
        double *e = realloc(d->epoch_ends, cap * sizeof *e);
        if (!e)
            return 0;
        d->epoch_ends = e;
        d->epochs_cap = cap;
    }
    d->epoch_ends[d->epochs++] = iteration;
    return 1;
}

void plot_free(plot_data *d)
{
    free(d->loss.p);
    free(d->acc.p);
    free(d->val_loss.p);
    free(d->val_acc.p);
    free(d->epoch_ends);
    memset(d, 0, sizeof *d);
}

typedef struct panel {
    double x, y, w, h;       /* pixel box of the axes */
    double xmax, ymin, ymax; /* data range */
} panel;

static double px(const panel *p, double it)
{
    return p->x + p->w * (p->xmax > 0 ? it / p->xmax : 0);
}

static double py(const panel *p, double v)
{
    double t = (v - p->ymin) / (p->ymax - p->ymin);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return p->y + p->h * (1 - t);
}

/* A "nice" tick step near range / 5. */
static double tick_step(double range)
{
    double raw = range / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void axes(cairo_t *cr, const panel *p, const plot_data *d, const char *label)
{
    char text[32];
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, p->x, p->y, p->w, p->h);
    cairo_fill(cr);
    cairo_set_line_width(cr, 1);
    cairo_set_font_size(cr, 11);
    double step = tick_step(p->ymax - p->ymin);
    for (double v = ceil(p->ymin / step) * step; v <= p->ymax + 1e-9; v += step) {
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_move_to(cr, p->x, py(p, v));
        cairo_line_to(cr, p->x + p->w, py(p, v));
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        snprintf(text, sizeof text, "%g", v);
        cairo_move_to(cr, p->x - 8 - 6.0 * (double)strlen(text), py(p, v) + 4);
        cairo_show_text(cr, text);
    }
    double xs = tick_step(p->xmax > 0 ? p->xmax : 1);
    for (double it = 0; it <= p->xmax + 1e-9; it += xs) {
        snprintf(text, sizeof text, "%g", it);
        cairo_move_to(cr, px(p, it) - 3.0 * (double)strlen(text), p->y + p->h + 15);
        cairo_show_text(cr, text);
    }
    double dash[2] = {4, 4};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    for (size_t e = 0; e < d->epochs; e++) {
        cairo_move_to(cr, px(p, d->epoch_ends[e]), p->y);
        cairo_line_to(cr, px(p, d->epoch_ends[e]), p->y + p->h);
        cairo_stroke(cr);
    }
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, p->x, p->y, p->w, p->h);
    cairo_stroke(cr);
    cairo_save(cr);
    cairo_move_to(cr, p->x - 48, p->y + p->h / 2 + 25);
    cairo_rotate(cr, -PI / 2);
    cairo_set_font_size(cr, 13);
    cairo_show_text(cr, label);
    cairo_restore(cr);
}

/* The smoothing of a training curve of n points: an exponential average over about n / 15 of
 * them, at most MATLAB's 0.9; short runs barely smoothed (a long average lags far behind). */
double plot_smoothing(size_t n)
{
    double w = (double)n / 15.0;
    return w <= 1.0 ? 0.0 : fmin(0.9, 1.0 - 1.0 / w);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The loss axis's top: the 98th percentile of the raw training losses (the first steps' spike
 * would flatten everything after it) or the highest validation loss, whichever is higher. */
double plot_loss_top(const plot_series *train, const plot_series *val)
{
    double top = 0.1;
    double *v = train->n ? malloc(train->n * sizeof *v) : NULL;
    size_t n = 0;
    for (size_t i = 0; v && i < train->n; i++)
        if (isfinite(train->p[i].value))
            v[n++] = train->p[i].value;
    if (n) {
        qsort(v, n, sizeof *v, by_value);
        top = fmax(top, v[(size_t)(0.98 * (double)(n - 1))]);
    }
    free(v);
    for (size_t i = 0; i < val->n; i++)
        if (isfinite(val->p[i].value))
            top = fmax(top, val->p[i].value);
    return top * 1.08;
}

static void curve(cairo_t *cr, const panel *p, const plot_series *s, double scale, double smooth,
                  double r, double g, double b, double width)
{
    cairo_save(cr);
    cairo_rectangle(cr, p->x, p->y, p->w, p->h); /* values past the axis leave the panel */
    cairo_clip(cr);
    double avg = 0;
    for (size_t i = 0; i < s->n; i++) {
        double v = s->p[i].value * scale;
        avg = i ? smooth * avg + (1 - smooth) * v : v; /* exponential smoothing, as MATLAB's */
        double x = px(p, s->p[i].iteration), y = py(p, smooth > 0 ? avg : v);
        if (i)
            cairo_line_to(cr, x, y);
        else
            cairo_move_to(cr, x, y);
    }
    cairo_set_source_rgb(cr, r, g, b);
    cairo_set_line_width(cr, width);
    cairo_stroke(cr);
    cairo_restore(cr);
}

static void points(cairo_t *cr, const panel *p, const plot_series *s, double scale)
{
    double dash[2] = {5, 3};
    cairo_set_dash(cr, dash, 2, 0);
    curve(cr, p, s, scale, 0, 0.1, 0.1, 0.1, 1.2);
    cairo_set_dash(cr, NULL, 0, 0);
    for (size_t i = 0; i < s->n; i++) {
        cairo_arc(cr, px(p, s->p[i].iteration), py(p, s->p[i].value * scale), 3.5, 0, 2 * PI);
        cairo_fill(cr);
    }
}

/* Writes the surface to path through a temporary name, and frees it. */
static int save_png(cairo_surface_t *surface, const char *path, char *err, size_t err_cap)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cairo_status_t cs = cairo_surface_write_to_png(surface, tmp);
    cairo_surface_destroy(surface);
    if (cs != CAIRO_STATUS_SUCCESS) {
        snprintf(err, err_cap, "cannot write %s: %s", tmp, cairo_status_to_string(cs));
        remove(tmp);
        return 0;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, err_cap, "cannot rename %s to %s", tmp, path);
        remove(tmp);
        return 0;
    }
    return 1;
}

/* A drawing on surface: the background and the title. */
static cairo_t *begin(cairo_surface_t *surface, const char *title)
{
    cairo_t *cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 0.96, 0.96, 0.96);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_font_size(cr, 15);
    cairo_move_to(cr, 80, 26);
    cairo_show_text(cr, title);
    return cr;
}

int plot_write_png(const plot_data *d, const char *path, const char *title, char *err,
                   size_t err_cap)
{
    const int W = 900, H = 660;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
    cairo_t *cr = begin(surface, title);
    double xmax = d->max_iteration > 0 ? d->max_iteration : 1;
    double scale = d->error_metric ? 1 : 100; /* an error: on the scale of its values */
    panel acc = {80, 45, W - 110, 250, xmax, 0,
                 d->error_metric ? plot_loss_top(&d->acc, &d->val_acc) : 100};
    panel loss = {80, 345, W - 110, 250, xmax, 0, plot_loss_top(&d->loss, &d->val_loss)};
    double smooth = plot_smoothing(d->loss.n);
    axes(cr, &acc, d, d->error_metric ? "RMSE" : "Accuracy (%)");
    axes(cr, &loss, d, "Loss");
    curve(cr, &acc, &d->acc, scale, 0, 0.65, 0.8, 0.95, 1);      /* raw, light */
    curve(cr, &acc, &d->acc, scale, smooth, 0.0, 0.45, 0.74, 2); /* smoothed */
    points(cr, &acc, &d->val_acc, scale);
    curve(cr, &loss, &d->loss, 1, 0, 0.98, 0.75, 0.6, 1);
    curve(cr, &loss, &d->loss, 1, smooth, 0.85, 0.33, 0.1, 2);
    points(cr, &loss, &d->val_loss, 1);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_font_size(cr, 12);
    cairo_move_to(cr, 80 + (W - 110) / 2.0 - 30, H - 30);
    cairo_show_text(cr, "Iteration");
    cairo_move_to(cr, 80, H - 10); /* the legend on a line of its own, under everything */
    cairo_show_text(cr, "training: light raw, dark smoothed   validation: points   epochs: dashed");
    cairo_destroy(cr);
    return save_png(surface, path, err, err_cap);
}

/* A colour per model, distinct for the first ten. */
static void colour(size_t i, double *r, double *g, double *b)
{
    static const double c[10][3] = {{0.12, 0.47, 0.71}, {1.0, 0.5, 0.05}, {0.17, 0.63, 0.17},
                                    {0.84, 0.15, 0.16}, {0.58, 0.4, 0.74}, {0.55, 0.34, 0.29},
                                    {0.89, 0.47, 0.76}, {0.5, 0.5, 0.5}, {0.74, 0.74, 0.13},
                                    {0.09, 0.75, 0.81}};
    *r = c[i % 10][0], *g = c[i % 10][1], *b = c[i % 10][2];
}

int plot_write_models_png(const plot_data *models, const char *const *names, size_t n,
                          const char *path, const char *title, char *err, size_t err_cap)
{
    const int W = 900, H = 660 + 14 * (int)(n ? (n - 1) / 5 : 0); /* legend rows of 5 */
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
    cairo_t *cr = begin(surface, title);
    double xmax = 1, lmax = 0.1;
    for (size_t i = 0; i < n; i++) {
        xmax = fmax(xmax, models[i].max_iteration);
        lmax = fmax(lmax, plot_loss_top(&models[i].loss, &models[i].val_loss));
    }
    plot_data none;
    memset(&none, 0, sizeof none);
    panel acc = {80, 45, W - 110, 250, xmax, 0, 100};
    panel loss = {80, 345, W - 110, 250, xmax, 0, lmax};
    axes(cr, &acc, &none, "Accuracy (%)");
    axes(cr, &loss, &none, "Loss");
    for (size_t i = 0; i < n; i++) {
        double r, g, b;
        colour(i, &r, &g, &b);
        double smooth = plot_smoothing(models[i].loss.n);
        curve(cr, &acc, &models[i].acc, 100, smooth, r, g, b, 2);
        curve(cr, &loss, &models[i].loss, 1, smooth, r, g, b, 2);
        /* validation: dots in the model's colour, accuracy and loss */
        const struct {
            const panel *on;
            const plot_series *s;
            double scale;
        } val[2] = {{&acc, &models[i].val_acc, 100}, {&loss, &models[i].val_loss, 1}};
        cairo_set_source_rgb(cr, r, g, b);
        for (int v = 0; v < 2; v++)
            for (size_t k = 0; k < val[v].s->n; k++) {
                if (!isfinite(val[v].s->p[k].value))
                    continue;
                cairo_arc(cr, px(val[v].on, val[v].s->p[k].iteration),
                          py(val[v].on, val[v].scale * val[v].s->p[k].value), 3.5, 0, 2 * PI);
                cairo_fill(cr);
            }
        cairo_set_source_rgb(cr, r, g, b); /* legend */
        cairo_rectangle(cr, 80 + 150.0 * (double)(i % 5), 633 + 14.0 * (double)(i / 5), 10, 10);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        cairo_set_font_size(cr, 11);
        cairo_move_to(cr, 95 + 150.0 * (double)(i % 5), 642 + 14.0 * (double)(i / 5));
        cairo_show_text(cr, names[i]);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_font_size(cr, 12);
    cairo_move_to(cr, 80 + (W - 110) / 2.0 - 120, 626);
    cairo_show_text(cr, "Iteration (training smoothed; validation: dots)");
    cairo_destroy(cr);
    return save_png(surface, path, err, err_cap);
}

int plot_confusion_png(const char *const *names, size_t K, const size_t *counts,
                       const char *path, const char *title, char *err, size_t err_cap)
{
    const double cell = K <= 10 ? 56 : K <= 30 ? 24 : 12, left = 150, top = 150;
    const int W = (int)(left + cell * (double)K + 40), H = (int)(top + cell * (double)K + 60);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W < 500 ? 500 : W, H);
    cairo_t *cr = begin(surface, title);
    cairo_set_font_size(cr, cell >= 24 ? 11 : 8);
    for (size_t t = 0; t < K; t++) {
        size_t row = 0;
        for (size_t p = 0; p < K; p++)
            row += counts[t * K + p];
        for (size_t p = 0; p < K; p++) {
            size_t n = counts[t * K + p];
            double share = row ? (double)n / (double)row : 0, x = left + cell * (double)p,
                   y = top + cell * (double)t;
            /* right answers blue, mistakes red, both deeper with their share of the row */
            if (t == p)
                cairo_set_source_rgb(cr, 1 - 0.8 * share, 1 - 0.55 * share, 1 - 0.25 * share);
            else
                cairo_set_source_rgb(cr, 1 - 0.15 * share, 1 - 0.8 * share, 1 - 0.8 * share);
            cairo_rectangle(cr, x, y, cell - 1, cell - 1);
            cairo_fill(cr);
            if (n && cell >= 24) {
                char text[32];
                snprintf(text, sizeof text, "%zu", n);
                cairo_text_extents_t e;
                cairo_text_extents(cr, text, &e);
                cairo_set_source_rgb(cr, share > 0.6 ? 1 : 0, share > 0.6 ? 1 : 0,
                                     share > 0.6 ? 1 : 0);
                cairo_move_to(cr, x + (cell - e.width) / 2, y + (cell + e.height) / 2);
                cairo_show_text(cr, text);
            }
        }
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1); /* true class, left of its row */
        cairo_text_extents_t e;
        cairo_text_extents(cr, names[t], &e);
        cairo_move_to(cr, left - 8 - e.width, top + cell * (double)t + (cell + e.height) / 2);
        cairo_show_text(cr, names[t]);
        cairo_save(cr); /* predicted class, up the top of its column */
        cairo_move_to(cr, left + cell * (double)t + (cell + e.height) / 2, top - 8);
        cairo_rotate(cr, -PI / 2);
        cairo_show_text(cr, names[t]);
        cairo_restore(cr);
    }
    cairo_set_font_size(cr, 12);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_move_to(cr, left, H - 20);
    cairo_show_text(cr, "rows: true class; columns: predicted class; shade: share of the row");
    cairo_destroy(cr);
    return save_png(surface, path, err, err_cap);
}
