/* clgrad-train --sweep FILE: several experiments at once over the devices (clg_experiments_run),
 * sharing one decoded copy of the data, with a live table, a ranked final table, a plot of
 * every model and a CSV of the results. */
#define _POSIX_C_SOURCE 200809L
#include "train_sweep.h"
#include "tool_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train_plot.h"
#include "tool_error.h"

#define MAX_EXPERIMENTS 64
#define MAX_WORDS 64

typedef struct row {
    char net[256];
    int epoch, epochs, done;
    size_t iteration, iterations;
    double loss, acc, val_acc, test_acc;
    int has_val;
    size_t every;                /* --verbose-frequency: a line every that many iterations */
    plot_data plot;
} row;

typedef struct sweep {
    row rows[MAX_EXPERIMENTS];
    size_t n;
    int tty, quiet, drawn;
    double last_draw;
    clg_experiment_result *res;
    clg_experiment *e;
} sweep;

/* An experiment's model file name, NAME.clgm without the folder: '/' becomes '_'. */
static void model_name(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s", name);
    for (char *p = out; *p; p++)
        *p = *p == '/' ? '_' : *p;
}

/* Every trained model as dir/NAME.clgm (the folder made as needed, model_name); says where,
 * and which is best. Returns 0 when one could not be written. */
static int save_models(const char *dir, const clg_experiment *e,
                       const clg_experiment_result *res, size_t n, const size_t *order)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) /* mkdir -p */
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0777);
            *p = '/';
        }
    mkdir(path, 0777);
    int ok = 1;
    size_t saved = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = order[j];
        if (!res[i].net)
            continue;
        char name[256];
        model_name(e[i].name, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s.clgm", dir, name);
        clg_status st = clg_net_save(res[i].net, path);
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-train: saving experiment %s to %s: %s\n", e[i].name, path,
                    tool_message(st, clg_ctx_last_error(clg_net_ctx(res[i].net))));
            ok = 0;
            continue;
        }
        if (!saved++)
            printf("Models saved to %s/NAME.clgm; the best: %s\n", dir, path);
    }
    return ok;
}

static void print_table(sweep *s)
{
    if (s->tty && s->drawn) /* redraw in place */
        printf("\033[%zuA", s->n + 1);
    printf("%-16s %-6s %-9s %-13s %-9s %-10s %-10s\n", "experiment", "device", "epoch",
           "iteration", "loss", "mb acc", "val acc");
    for (size_t i = 0; i < s->n; i++) {
        row *r = &s->rows[i];
        char ep[16], it[24], va[16] = "-";
        snprintf(ep, sizeof ep, "%d/%d", r->epoch, r->epochs);
        snprintf(it, sizeof it, "%zu/%zu", r->iteration, r->iterations);
        if (r->has_val)
            snprintf(va, sizeof va, "%.2f%%", 100 * r->val_acc);
        printf("%-16.16s %-6zu %-9s %-13s %-9.4f %-9.2f%% %-10s%s\033[K\n", s->e[i].name,
               s->res[i].device, ep, it, r->loss, 100 * r->acc, va, r->done ? " done" : "");
    }
    fflush(stdout);
    s->drawn = 1;
    s->last_draw = tool_now();
}

static int progress(size_t i, const clg_train_progress *p, void *user)
{
    sweep *s = user;
    row *r = &s->rows[i];
    r->epochs = p->max_epochs;
    r->iterations = p->iterations_per_epoch * (size_t)p->max_epochs;
    int changed = 0;
    if (p->kind == CLG_PROGRESS_ITERATION) {
        r->epoch = p->epoch, r->iteration = p->iteration, r->loss = p->loss, r->acc = p->accuracy;
        plot_add(&r->plot.loss, (double)p->iteration, p->loss);
        plot_add(&r->plot.acc, (double)p->iteration, p->accuracy);
        r->plot.max_iteration = (double)p->iteration;
    } else if (p->kind == CLG_PROGRESS_VALIDATION) {
        r->has_val = 1, r->val_acc = p->val_accuracy;
        plot_add(&r->plot.val_acc, (double)p->iteration, p->val_accuracy);
        plot_add(&r->plot.val_loss, (double)p->iteration, p->val_loss);
        changed = 1;
    } else if (p->kind == CLG_PROGRESS_EPOCH) {
        changed = 1;
    } else if (p->kind == CLG_PROGRESS_DONE) {
        r->done = 1, changed = 1;
    }
    if (s->quiet)
        return 0;
    if (s->tty && (changed || tool_now() - s->last_draw > 0.5))
        print_table(s);
    else if (!s->tty && p->kind == CLG_PROGRESS_ITERATION && r->every &&
             p->iteration % r->every == 0)
        printf("[%s] iteration %zu: loss %.4f, accuracy %.2f%%\n", s->e[i].name, p->iteration,
               p->loss, 100 * p->accuracy);
    else if (!s->tty && p->kind == CLG_PROGRESS_VALIDATION)
        printf("[%s] iteration %zu: loss %.4f, validation accuracy %.2f%%\n", s->e[i].name,
               p->iteration, p->loss, 100 * p->val_accuracy);
    else if (!s->tty && p->kind == CLG_PROGRESS_EPOCH) /* reported once the epoch is over */
        printf("[%s] epoch %d of %d done: loss %.4f\n", s->e[i].name, p->epoch - 1,
               p->max_epochs, p->loss);
    return 0;
}

/* Splits line into words (spaces and tabs) in place; '#' starts a comment. */
static size_t words(char *line, char **w, size_t cap)
{
    size_t n = 0;
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    for (char *t = strtok(line, " \t\r\n"); t && n < cap; t = strtok(NULL, " \t\r\n"))
        w[n++] = t;
    return n;
}

/* order[0..n) by test accuracy, best first (insertion sort: a few dozen at most). */
static void rank_by_test_accuracy(const row *rows, size_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = i, v = i;
        while (k > 0 && rows[order[k - 1]].test_acc < rows[v].test_acc) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = v;
    }
}

static void write_csv(const sweep *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "clgrad-train: cannot write %s\n", path);
        return;
    }
    fprintf(f, "name,net,status,device,epochs,iterations,final_loss,best_val_accuracy,"
               "test_accuracy,elapsed_s,images_per_s,error\n");
    for (size_t i = 0; i < s->n; i++) {
        const clg_experiment_result *r = &s->res[i];
        char err[512];
        snprintf(err, sizeof err, "%s", r->error);
        for (char *c = err; *c; c++)
            if (*c == '"' || *c == '\n')
                *c = '\'';
        fprintf(f, "%s,%s,%s,%zu,%d,%zu,%.6f,%.6f,%.6f,%.2f,%.1f,\"%s\"\n", s->e[i].name,
                s->rows[i].net, clg_status_name(r->status), r->device, r->report.epochs,
                r->report.iterations, r->report.loss, r->report.best_val_accuracy,
                s->rows[i].test_acc, r->report.elapsed_s, r->report.images_per_s, err);
    }
    fclose(f);
}

int sweep_run(const char *file, int argc, char **argv, clg_ctx *const *ctxs, size_t nctx,
              clg_datastore *train, clg_datastore *val, clg_datastore *test, const cli *base)
{
    char *text = read_text_file(file);
    if (!text) {
        fprintf(stderr, "clgrad-train: cannot read the sweep file %s\n", file);
        return 1;
    }
    static sweep s; /* large: rows with their plots */
    memset(&s, 0, sizeof s);
    s.tty = isatty(STDOUT_FILENO) && !base->quiet;
    s.quiet = base->quiet;
    clg_experiment e[MAX_EXPERIMENTS];
    int lines[MAX_EXPERIMENTS]; /* each experiment's line in the file */
    clg_exec_options x[MAX_EXPERIMENTS];
    clg_experiment_result res[MAX_EXPERIMENTS];
    char *nets[MAX_EXPERIMENTS] = {0};
    clg_datastore *augmented[MAX_EXPERIMENTS] = {0}, *shared = NULL, *shared_val = NULL;
    int rc = 0, line_no = 0;
    char *save = NULL;
    memset(res, 0, sizeof res);
    /* first pass: count the experiments, so that the shared views know their readers */
    char *copy = strdup(text);
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *w[MAX_WORDS];
        s.n += words(l, w, MAX_WORDS) > 0;
    }
    free(copy);
    if (!s.n || s.n > MAX_EXPERIMENTS) {
        fprintf(stderr, "clgrad-train: %s: %zu experiments (1 to %d)\n", file, s.n, MAX_EXPERIMENTS);
        free(text);
        return 2;
    }
    clg_status st = clg_datastore_shared(train, (unsigned)s.n, 0, &shared);
    if (st == CLG_OK && val)
        st = clg_datastore_shared(val, (unsigned)s.n, 0, &shared_val);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-train: %s\n", clg_last_error());
        free(text);
        return 1;
    }
    size_t n = 0;
    save = NULL;
    for (char *l = strtok_r(text, "\n", &save); rc == 0 && l; l = strtok_r(NULL, "\n", &save)) {
        line_no++;
        char *w[MAX_WORDS], *args[2 * MAX_WORDS + 256];
        size_t k = words(l, w, MAX_WORDS);
        if (!k)
            continue;
        if (k < 2) {
            fprintf(stderr, "clgrad-train: %s:%d: expected NAME NET|default [options]\n", file, line_no);
            rc = 2;
            break;
        }
        /* one model file each: two experiments of one name would overwrite each other */
        char mine[256], theirs[256];
        model_name(w[0], mine, sizeof mine);
        for (size_t j = 0; rc == 0 && j < n; j++) {
            model_name(e[j].name, theirs, sizeof theirs);
            if (!strcmp(mine, theirs)) {
                fprintf(stderr, "clgrad-train: %s:%d: experiment name \"%s\" is taken by line %d "
                        "(each experiment's model is saved as NAME.clgm): give it another\n",
                        file, line_no, w[0], lines[j]);
                rc = 2;
            }
        }
        if (rc)
            break;
        lines[n] = line_no;
        /* the command line's options, then the line's: later ones win */
        int na = 0;
        for (int i = 0; i < argc && na < 256; i++)
            args[na++] = argv[i];
        for (size_t i = 2; i < k; i++)
            args[na++] = w[i];
        cli c;
        int r = cli_parse(na, args, &c);
        if (r) {
            fprintf(stderr, "clgrad-train: %s:%d: the options of experiment %s are refused\n",
                    file, line_no, w[0]);
            rc = r < 0 ? 2 : r;
            break;
        }
        int dflt = !strcmp(w[1], "default");
        char path[4096]; /* a relative net path is relative to the sweep file's folder */
        const char *slash = strrchr(file, '/');
        if (w[1][0] != '/' && slash)
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - file), file, w[1]);
        else
            snprintf(path, sizeof path, "%s", w[1]);
        nets[n] = dflt ? strdup(default_net) : read_text_file(path);
        if (!nets[n]) {
            fprintf(stderr, "clgrad-train: %s:%d: cannot read %s\n", file, line_no, path);
            rc = 1;
            break;
        }
        clg_datastore *data = shared;
        if (c.augmenting) { /* its own augmentation over the shared decoded images */
            c.augment.seed = c.o.seed;
            if (c.augment.crop == CLG_CROP_RANDOM_RESIZED) { /* from the shared samples */
                clg_shape s = clg_datastore_sample_shape(shared);
                c.augment.height = s.h, c.augment.width = s.w;
            }
            st = clg_datastore_augment(shared, &c.augment, &augmented[n]);
            if (st != CLG_OK) {
                fprintf(stderr, "clgrad-train: %s:%d: %s\n", file, line_no, clg_last_error());
                rc = 1;
                break;
            }
            data = augmented[n];
        }
        memset(&e[n], 0, sizeof e[n]);
        e[n].name = strdup(w[0]);
        e[n].net_text = nets[n];
        e[n].init_seed = c.o.seed;
        x[n] = c.x;
        e[n].options = c.o;
        e[n].options.execution = &x[n];
        e[n].options.checkpoint_path = NULL; /* one folder would serve them all: none */
        e[n].options.metrics_log = NULL;
        e[n].train = data;
        e[n].val = shared_val;
        snprintf(s.rows[n].net, sizeof s.rows[n].net, "%s", w[1]);
        s.rows[n].epochs = c.o.max_epochs;
        s.rows[n].every = c.table_every;
        n++;
    }
    free(text);
    s.n = n;
    s.e = e;
    s.res = res;
    if (rc == 0) {
        if (!s.quiet)
            printf("%zu experiments on %zu device%s\n", n, nctx, nctx == 1 ? "" : "s");
        double t0 = tool_now();
        st = clg_experiments_run(ctxs, nctx, e, n, progress, &s, res);
        double secs = tool_now() - t0;
        if (st != CLG_OK) {
            fprintf(stderr, "clgrad-train: %s\n", clg_last_error());
            rc = 1;
        }
        for (size_t i = 0; rc == 0 && i < n; i++) {
            double loss = 0;
            s.rows[i].test_acc = -1;
            if (res[i].net && clg_net_evaluate(res[i].net, test, 256, &loss, &s.rows[i].test_acc) != CLG_OK)
                s.rows[i].test_acc = -1;
        }
        if (rc == 0) {
            if (s.tty)
                print_table(&s);
            size_t order[MAX_EXPERIMENTS];
            rank_by_test_accuracy(s.rows, order, n);
            printf("\nRanked by test accuracy (%zu images), all in %.1f s:\n", clg_datastore_size(test),
                   secs);
            printf("%-4s %-16s %-10s %-10s %-9s %-8s %-9s %s\n", "rank", "experiment", "test acc",
                   "best val", "loss", "time s", "images/s", "device");
            for (size_t j = 0; j < n; j++) {
                size_t i = order[j];
                const clg_experiment_result *r = &res[i];
                if (r->status != CLG_OK) {
                    printf("%-4s %-16.16s failed: %s\n", "-", e[i].name,
                           tool_message(r->status, r->error));
                    continue;
                }
                char best[16] = "-";
                if (r->report.has_validation)
                    snprintf(best, sizeof best, "%.2f%%", 100 * r->report.best_val_accuracy);
                printf("%-4zu %-16.16s %8.2f%%  %9s  %-9.4f %-8.1f %-9.0f %zu\n", j + 1,
                       e[i].name, 100 * s.rows[i].test_acc, best, r->report.loss,
                       r->report.elapsed_s, r->report.images_per_s, r->device);
            }
            int epochs = 0;
            for (size_t i = 0; i < n; i++)
                epochs = e[i].options.max_epochs > epochs ? e[i].options.max_epochs : epochs;
            printf("Training images decoded: %llu for %zu experiments over %d epoch%s of %zu "
                   "images (shared)\n", (unsigned long long)clg_datastore_decoded(train), n,
                   epochs, epochs == 1 ? "" : "s", clg_datastore_size(train));
            if (base->results)
                write_csv(&s, base->results);
            if (!save_models(base->save_models, e, res, n, order))
                rc = 1;
            if (base->plot) {
                plot_data plots[MAX_EXPERIMENTS];
                const char *names[MAX_EXPERIMENTS];
                for (size_t i = 0; i < n; i++)
                    plots[i] = s.rows[i].plot, names[i] = e[i].name;
                char err[256];
                if (!plot_write_models_png(plots, names, n, base->plot, "Experiments", err, sizeof err))
                    fprintf(stderr, "clgrad-train: %s\n", err);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        clg_net_destroy(res[i].net);
        free((char *)e[i].name);
        free(nets[i]);
        clg_datastore_destroy(augmented[i]);
        plot_free(&s.rows[i].plot);
    }
    clg_datastore_destroy(shared);
    clg_datastore_destroy(shared_val);
    for (size_t i = 0; i < n; i++)
        if (rc == 0 && res[i].status != CLG_OK)
            rc = 1; /* an experiment failed: the others' results stand, the exit says so */
    return rc;
}
