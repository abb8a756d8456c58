/* clgrad-tune gemm|conv|all: searches the built-in GEMM's parameters and the convolutions'
 * register blocks for a device (clg_gemm_tune, clg_conv_tune: every candidate checked against
 * a double reference first), each candidate in a child process so that one that crashes or
 * hangs the OpenCL driver cannot take the search down; compares the GEMM with CLBlast per
 * shape class, prints before and after, and stores the result as the device's tuning file,
 * which every context on that device uses from then on. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "clgrad/clgrad.h"
#include "gemm_set.h"
#include "opts.h"
#include "pocl_pin.h"
#include "tool_clock.h"
#include "tool_error.h"

#define CANDIDATE_SECONDS 300 /* a candidate still running after this is a hang */

static const char *self_path = "clgrad-tune";

static void describe(const clg_gemm_params *p, char *out, size_t size)
{
    if (p->kernel == CLG_GEMM_KERNEL_REG)
        snprintf(out, size,
                 "reg %ux%u local %ux%u kc %u pack_min_k %u stage_b %u pack_a %u conv %ux%u thin %u "
                 "pf_panel %u",
                 p->mr, p->nr, p->local_m, p->local_n, p->kc, p->pack_min_k, p->stage_b,
                 p->pack_a_min_n, p->conv_mr ? p->conv_mr : p->mr, p->conv_nr ? p->conv_nr : p->nr > 32 ? 32 : p->nr,
                 p->thin_nr < p->nr ? p->thin_nr : p->nr, p->pf_panel);
    else
        snprintf(out, size, "tile %ux%u kwg %u items %ux%u vw %u kwi %u db %u", p->mwg, p->nwg,
                 p->kwg, p->mdimc, p->ndimc, p->vw, p->kwi, p->db);
}

/* Parameters as one word, K=V,..., for the worker. */
static int encode(const clg_gemm_params *p, char *out, size_t size)
{
    int n = snprintf(out, size, " ");
    return n + clg_gemm_params_print(p, "=", ",", out + n, size - (size_t)n);
}

/* Reads one set; returns where the text after it starts, or NULL. */
static const char *decode(const char *text, clg_gemm_params *p)
{
    char word[768];
    int used = 0;
    if (sscanf(text, " %767s%n", word, &used) != 1 || !gemm_set_apply("clgrad-tune", "worker", word, p))
        return NULL;
    return text + used;
}

/* The child: requests on stdin ("s SET": score it; "c SET BASE": how much faster SET is than
 * BASE), one answer line each on stdout ("ok NUMBER" or "no WHY"). */
static int worker(clg_ctx *ctx, int conv, int runs)
{
    /* For the test that a crashing candidate does not end the search: this row block dies. */
    const char *crash = getenv("CLGRAD_TUNE_TEST_CRASH_MR");
    char line[2048];
    while (fgets(line, sizeof line, stdin)) {
        clg_gemm_params p, base;
        clg_gemm_get_params(ctx, &p);
        base = p;
        const char *rest = decode(line + 1, &p);
        int compare = line[0] == 'c';
        if (crash && rest && p.mr == (unsigned)atoi(crash))
            abort();
        double score = 0;
        clg_status st = !rest || (compare && !decode(rest, &base)) ? CLG_ERR_INVALID_ARG
                        : compare && conv ? clg_conv_tune_compare(ctx, &p, &base, runs, &score)
                        : compare         ? clg_gemm_tune_compare(ctx, &p, &base, runs, &score)
                        : conv            ? clg_conv_tune_score(ctx, &p, runs, &score)
                                          : clg_gemm_tune_score(ctx, &p, runs, &score);
        if (st == CLG_OK)
            printf("ok %.6g\n", score);
        else
            printf("no %s\n", tool_message(st, clg_ctx_last_error(ctx)));
        fflush(stdout);
    }
    return 0;
}

typedef struct child {
    pid_t pid;
    FILE *to, *from;
    int conv, runs;
    char device[32];
} child;

static int child_start(child *c)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return 0;
    fflush(stdout);
    c->pid = fork();
    if (c->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        char runs[16];
        snprintf(runs, sizeof runs, "%d", c->runs);
        char *args[] = {(char *)self_path, "--worker", c->conv ? "conv" : "gemm", "--filter",
                        c->device, "--runs", runs, NULL};
        execv("/proc/self/exe", args); /* this very program, wherever it was found */
        execvp(self_path, args);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (c->pid < 0) {
        close(in[1]), close(out[0]);
        return 0;
    }
    c->to = fdopen(in[1], "w");
    c->from = fdopen(out[0], "r");
    return c->to && c->from;
}

/* Ends the child; says how it ended when it died on its own. */
static void child_stop(child *c, int kill_it, char *why, size_t why_size)
{
    if (!c->pid)
        return;
    if (c->to)
        fclose(c->to);
    if (kill_it)
        kill(c->pid, SIGKILL);
    int status = 0;
    waitpid(c->pid, &status, 0);
    if (c->from)
        fclose(c->from);
    if (why && WIFSIGNALED(status))
        snprintf(why, why_size, "the candidate crashed its process (signal %d)", WTERMSIG(status));
    else if (why && WIFEXITED(status))
        snprintf(why, why_size, "the candidate ended its process (exit %d)", WEXITSTATUS(status));
    c->pid = 0;
    c->to = c->from = NULL;
}

/* One request to the worker (started when there is none): its number, or 0 with why. */
static double child_ask(child *c, const clg_gemm_params *p, const clg_gemm_params *base, char *why,
                        size_t why_size)
{
    if (!c->pid && !child_start(c)) {
        snprintf(why, why_size, "cannot start a worker process: %s", strerror(errno));
        return 0;
    }
    char line[2048];
    int used = snprintf(line, sizeof line, "%c", base ? 'c' : 's');
    used += encode(p, line + used, sizeof line - (size_t)used);
    if (base)
        used += encode(base, line + used, sizeof line - (size_t)used);
    snprintf(line + used, sizeof line - (size_t)used, "\n");
    struct pollfd pf = {fileno(c->from), POLLIN, 0};
    if (fputs(line, c->to) == EOF || fflush(c->to) == EOF ||
        poll(&pf, 1, CANDIDATE_SECONDS * 1000) <= 0) {
        int hung = pf.revents == 0;
        child_stop(c, 1, why, why_size);
        if (hung)
            snprintf(why, why_size, "the candidate ran over %d s (killed)", CANDIDATE_SECONDS);
        return 0;
    }
    if (!fgets(line, sizeof line, c->from)) {
        child_stop(c, 0, why, why_size);
        return 0;
    }
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "ok ", 3) == 0)
        return strtod(line + 3, NULL);
    snprintf(why, why_size, "%s", strncmp(line, "no ", 3) == 0 ? line + 3 : line);
    return 0;
}

static double child_evaluate(void *user, const clg_gemm_params *p, char *why, size_t why_size)
{
    return child_ask(user, p, NULL, why, why_size);
}

static double child_compare(void *user, const clg_gemm_params *p, const clg_gemm_params *best,
                            char *why, size_t why_size)
{
    return child_ask(user, p, best, why, why_size);
}

static void on_compared(void *user, const clg_gemm_params *p, double ratio, const char *why)
{
    (void)user, (void)p;
    if (strcmp(why, "again") == 0) /* the second run of a win, which decides */
        printf("    %.3fx again: %s\n", ratio,
               ratio > 1.02 ? "the new best" : "not confirmed, the best stays");
    else if (ratio > 0)
        printf("    %.3fx the best in paired runs%s\n", ratio, ratio > 1.02 ? "; once more:" : "");
    else
        printf("    paired runs against the best, again: REJECTED: %s\n", why);
    fflush(stdout);
}

static void on_candidate(void *user, const clg_gemm_params *p, double score, const char *why)
{
    (void)user;
    char text[160];
    describe(p, text, sizeof text);
    if (score > 0)
        printf("  %-76s %7.1f GFLOP/s%s%s%s\n", text, score, why[0] ? " (" : "", why, why[0] ? ")" : "");
    else
        printf("  %-76s REJECTED: %s\n", text, why);
    fflush(stdout);
}

/* One search (GEMM or convolutions); before and after on the parent's context. */
static int tune_one(clg_ctx *ctx, int conv, const clg_tune_options *base, child *c)
{
    clg_tune_options o = *base;
    c->conv = conv;
    o.user = c->runs ? c : NULL;
    if (!c->runs)
        o.evaluate = NULL, o.compare = NULL;
    clg_gemm_params before, best;
    clg_gemm_get_params(ctx, &before);
    double score = 0;
    printf("searching the %s on %s (%s; score: geometric mean GFLOP/s%s; after the first, "
           "the best's times the candidate's speed-up over it in paired runs)\n",
           conv ? "convolutions' register blocks" : "GEMM's parameters", clg_ctx_device(ctx)->name,
           o.level == CLG_TUNE_QUICK ? "quick" : "full",
           conv ? " of 3 passes of 5 layers" : " over 6 shapes");
    double t0 = tool_now();
    clg_status st = conv ? clg_conv_tune(ctx, &o, &best, &score) : clg_gemm_tune(ctx, &o, &best, &score);
    double seconds = tool_now() - t0;
    child_stop(c, 0, NULL, 0);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-tune: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
        return 1;
    }
    char a[160], b[160];
    describe(&before, a, sizeof a);
    describe(&best, b, sizeof b);
    printf("%s before: %s\n%s after:  %s, %.1f GFLOP/s (%.0f s)\n", conv ? "conv" : "gemm", a,
           conv ? "conv" : "gemm", b, score, seconds);
    return 0;
}

/* --from: how the search's result compares with the table's row for the device, in paired
 * runs (the table's blocks were chosen by hand and by earlier tunings). */
static int against_table(clg_ctx *ctx, int runs)
{
    clg_gemm_params best, row = clg_gemm_params_default(clg_ctx_device(ctx));
    double ratio = 0;
    clg_gemm_get_params(ctx, &best);
    row.conv_mr = best.conv_mr, row.conv_nr = best.conv_nr;
    clg_status st = clg_gemm_tune_compare(ctx, &best, &row, runs, &ratio);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-tune: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
        return 1;
    }
    char text[160];
    describe(&row, text, sizeof text);
    printf("against the table's row (%s), paired runs: %.2f of its speed\n", text, ratio);
    return 0;
}

typedef struct shape {
    const char *name;
    size_t m, n, k;
} shape;

/* Median GFLOP/s of one product with the context's current settings; < 0 on error. */
static double measure(clg_ctx *ctx, const shape *s, int runs, clg_tensor *const t[3])
{
    double best = -1;
    clg_matrix a = {t[0], 0, s->k}, b = {t[1], 0, s->n}, c = {t[2], 0, s->n};
    for (int r = -1; r < runs; r++) {
        double t0 = tool_now();
        if (clg_sgemm(ctx, CLG_NO_TRANS, CLG_NO_TRANS, s->m, s->n, s->k, 1.0f, a, b, 0.0f, c) != CLG_OK ||
            clg_ctx_finish(ctx) != CLG_OK)
            return -1;
        double g = 2e-9 * (double)s->m * (double)s->n * (double)s->k / (tool_now() - t0);
        if (r >= 0 && g > best)
            best = g;
    }
    return best;
}

/* Per shape class, whichever of the tuned built-in kernel and CLBlast is faster. */
static int choose_backends(clg_ctx *ctx, int runs, clg_gemm_backend per_class[CLG_GEMM_CLASSES])
{
    static const shape class_shapes[CLG_GEMM_CLASSES] = {
        {"small", 64, 64, 64}, {"medium", 256, 256, 256}, {"large", 1024, 1024, 1024},
    };
    clg_tensor *t[3] = {NULL, NULL, NULL};
    for (int j = 0; j < 3; j++)
        if (clg_tensor_create(ctx, (clg_shape){1024 * 1024, 1, 1, 1}, &t[j]) != CLG_OK ||
            clg_tensor_fill(t[j], 0.5f) != CLG_OK) {
            fprintf(stderr, "clgrad-tune: %s\n", clg_ctx_last_error(ctx));
            return 1;
        }
    for (int c = 0; c < CLG_GEMM_CLASSES; c++) {
        clg_gemm_set_backend(ctx, CLG_GEMM_BUILTIN);
        double mine = measure(ctx, &class_shapes[c], runs, t), theirs = -1;
        if (clg_gemm_has_clblast() && clg_gemm_set_backend(ctx, CLG_GEMM_CLBLAST) == CLG_OK)
            theirs = measure(ctx, &class_shapes[c], runs, t);
        per_class[c] = theirs > mine ? CLG_GEMM_CLBLAST : CLG_GEMM_BUILTIN;
        printf("class %-6s (%zux%zux%zu): builtin %.1f, clblast %.1f GFLOP/s -> %s\n",
               class_shapes[c].name, class_shapes[c].m, class_shapes[c].n, class_shapes[c].k, mine,
               theirs, per_class[c] == CLG_GEMM_CLBLAST ? "clblast" : "builtin");
    }
    clg_gemm_set_backend(ctx, CLG_GEMM_AUTO);
    for (int j = 0; j < 3; j++)
        clg_tensor_destroy(t[j]);
    return 0;
}

typedef struct settings {
    int runs, dry, quick, in_process;
    const char *filter, *set, *from, *worker_kind;
} settings;

#define AT(field) offsetof(settings, field)

static const opt_def defs[] = {
    {OPT_FLAG, "quick", AT(quick), 0, 0,
     .help = "the table's rows and one step around the best (about a minute); default: a "
             "full grid of register blocks, then refinement"},
    {OPT_INT, "runs", AT(runs), 1, 15, .value = "N",
     .help = "timed runs per shape (median; default 3)"},
    {OPT_FLAG, "dry-run", AT(dry), 0, 0, .help = "search and print, but do not store"},
    {OPT_TEXT, "set", AT(set), 0, 0, .value = "K=V,...",
     .help = "score (and with no --dry-run, store) one parameter set: kernel (reg|local), mr "
             "nr local_m local_n kc pack_min_k stage_b pack_a_min_n conv_mr conv_nr thin_nr "
             "pf_panel (reg: CPUs); mwg nwg kwg mdimc ndimc vw kwi db (local: GPUs); small_flops"},
    {OPT_TEXT, "from", AT(from), 0, 0, .value = "K=V,...",
     .help = "start the GEMM search from the device's parameters with these changed, without "
             "the table's rows, and compare its result with the table's row at the end (is the "
             "search able to find good blocks on its own?); implies --dry-run"},
    {OPT_FLAG, "in-process", AT(in_process), 0, 0,
     .help = "candidates in this process (faster; a crash ends the search)"},
    {OPT_TEXT, "filter", AT(filter), 0, 0, .value = "FILTER",
     .help = "device filter (default $CLGRAD_DEVICES); the first device is tuned"},
    {OPT_TEXT, "worker", AT(worker_kind), 0, 0, .value = "gemm|conv",
     .help = "(internal) score the candidates the parent sends"},
};

static const opt_tool tool = {
    "clgrad-tune", NULL,
    "usage: clgrad-tune gemm|conv|all [options]\n"
    "Searches the built-in GEMM's parameters (gemm), the convolutions' register blocks\n"
    "(conv) or both (all) on the first device of the auto environment, and stores them\n"
    "for that device in the cache folder. Every candidate is checked against a\n"
    "double-precision reference and runs in a child process.\n",
    "  -h, --help, --version\n", defs, sizeof defs / sizeof defs[0], 0, 1, "gemm, conv or all"};

int main(int argc, char **argv)
{
    pocl_pin_threads(1); /* before the first OpenCL call: see pocl_pin.h */
    settings opts = {.runs = 3};
    self_path = argv[0];
    size_t nops = 0;
    int parsed = opts_parse(&tool, argc, argv, &opts, &nops);
    if (parsed)
        return parsed < 0 ? 0 : parsed;
    int runs = opts.runs, dry = opts.dry, quick = opts.quick, in_process = opts.in_process;
    const char *filter = opts.filter, *set = opts.set, *from = opts.from, *what = nops ? argv[1] : NULL;
    const char *worker_kind = opts.worker_kind;
    if (worker_kind && strcmp(worker_kind, "gemm") && strcmp(worker_kind, "conv")) {
        fprintf(stderr, "clgrad-tune: --worker %s: the choices are gemm, conv\n", worker_kind);
        return 2;
    }
    if (!worker_kind && (!what || (strcmp(what, "gemm") && strcmp(what, "conv") &&
                                   strcmp(what, "all")))) {
        fprintf(stderr, "clgrad-tune: %s%s: give gemm, conv or all (clgrad-tune --help says "
                "more)\n", what ? "unknown search " : "nothing to tune", what ? what : "");
        return 2;
    }
    int do_gemm = what && (!strcmp(what, "gemm") || !strcmp(what, "all"));
    int do_conv = what && (!strcmp(what, "conv") || !strcmp(what, "all"));
    clg_device_info *all;
    size_t n, count;
    clg_device_info *chosen;
    clg_ctx *ctx = NULL;
    size_t device_index = 0;
    clg_ctx_options co = clg_ctx_options_default();
    co.tune = 0; /* what this tool does, and only as asked */
    clg_status st = clg_devices_list(&all, &n);
    if (st == CLG_OK && (st = clg_devices_select(all, n, CLG_ENV_AUTO, filter, &chosen, &count)) == CLG_OK) {
        device_index = chosen[0].index;
        st = clg_ctx_create(&chosen[0], &co, &ctx);
        clg_devices_free(chosen, count);
    }
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-tune: %s\n", tool_message(st, clg_last_error()));
        return 1;
    }
    int rc = 0;
    if (worker_kind) {
        rc = worker(ctx, !strcmp(worker_kind, "conv"), runs);
    } else {
        clg_tune_options o = clg_tune_options_default();
        o.level = quick ? CLG_TUNE_QUICK : CLG_TUNE_FULL;
        o.runs = runs;
        o.evaluate = child_evaluate;
        o.compare = child_compare;
        o.on_candidate = on_candidate;
        o.on_compared = on_compared;
        child c = {0, NULL, NULL, 0, in_process ? 0 : runs, ""};
        snprintf(c.device, sizeof c.device, "%zu", device_index);
        clg_gemm_set_backend(ctx, CLG_GEMM_BUILTIN);
        clg_gemm_params best;
        clg_gemm_get_params(ctx, &best);
        if (from) { /* the search's start: refused sets end the run here */
            o.table_rows = 0;
            dry = 1;
            rc = !gemm_set_apply("clgrad-tune", "from", from, &best) ? 2 : 0;
            if (!rc && (st = clg_gemm_set_params(ctx, &best)) != CLG_OK) {
                fprintf(stderr, "clgrad-tune: --from: %s\n", clg_ctx_last_error(ctx));
                rc = 2;
            }
        }
        if (!rc && set) {
            double score = 0;
            rc = !gemm_set_apply("clgrad-tune", "set", set, &best) ? 2 : 0;
            if (!rc && (st = clg_gemm_tune_score(ctx, &best, runs, &score)) == CLG_OK && do_conv)
                st = clg_conv_tune_score(ctx, &best, runs, &score);
            if (!rc && st != CLG_OK) {
                fprintf(stderr, "clgrad-tune: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
                rc = 1;
            }
            if (!rc) {
                on_candidate(NULL, &best, score, "");
                clg_gemm_set_params(ctx, &best);
            }
        } else if (!rc) {
            if (do_gemm)
                rc = tune_one(ctx, 0, &o, &c);
            if (!rc && do_gemm && from)
                rc = against_table(ctx, runs);
            if (!rc && do_conv)
                rc = tune_one(ctx, 1, &o, &c);
            clg_gemm_get_params(ctx, &best);
        }
        clg_gemm_backend per_class[CLG_GEMM_CLASSES];
        if (!rc)
            rc = choose_backends(ctx, runs, per_class);
        if (!rc && !dry) {
            st = clg_gemm_save_tuning(ctx, &best, per_class);
            if (st != CLG_OK) {
                fprintf(stderr, "clgrad-tune: %s\n", tool_message(st, clg_ctx_last_error(ctx)));
                rc = 1;
            } else {
                printf("saved in %s\n", clg_ctx_cache_dir(ctx));
            }
        }
    }
    clg_ctx_destroy(ctx);
    clg_devices_free(all, n);
    return rc;
}
