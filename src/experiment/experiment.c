/* Experiments: one thread per context takes the next waiting experiment (largest first), builds
 * its network on that context, trains it with clg_train and keeps the result. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/experiment.h"
#include "clgrad/nn.h"
#include "runtime/runtime_internal.h"

typedef struct runner {
    clg_ctx *const *ctxs;
    const clg_experiment *e;
    clg_experiment_result *results;
    size_t *queue, queued, next;   /* experiment indices, largest work first */
    clg_experiment_progress_fn progress;
    void *user;
    pthread_mutex_t lock;          /* the queue, and progress calls */
} runner;

typedef struct worker {
    runner *r;
    size_t device;
    size_t current;                /* the experiment it trains */
} worker;

static int relay(const clg_train_progress *p, void *user)
{
    worker *w = user;
    runner *r = w->r;
    if (!r->progress)
        return 0;
    pthread_mutex_lock(&r->lock);
    int stop = r->progress(w->current, p, r->user);
    pthread_mutex_unlock(&r->lock);
    return stop;
}

static void run_one(worker *w, size_t i)
{
    runner *r = w->r;
    const clg_experiment *e = &r->e[i];
    clg_experiment_result *res = &r->results[i];
    clg_ctx *ctx = r->ctxs[w->device];
    res->device = w->device;
    w->current = i;
    clg_net *net = NULL;
    clg_status st = e->net_text ? clg_net_parse(ctx, e->net_text, &net)
                                : clg__fail(ctx, CLG_ERR_INVALID_ARG, "no network text");
    if (st == CLG_OK)
        st = clg_net_init(net, e->init_seed);
    clg_train_options o = e->options;
    clg_exec_options x = e->options.execution ? *e->options.execution : clg_exec_options_default();
    x.contexts = NULL, x.context_count = 0; /* one device each */
    x.worker_load = NULL, x.worker_load_count = 0;
    o.execution = &x;
    o.progress = relay;
    o.progress_user = w;
    if (st == CLG_OK)
        st = clg_train(net, e->train, e->val, &o, &res->report);
    if (st == CLG_OK && e->save_path)
        st = clg_net_save(net, e->save_path);
    res->status = st;
    if (st != CLG_OK) {
        snprintf(res->error, sizeof res->error, "%s", clg_ctx_last_error(ctx));
        clg_net_destroy(net);
        net = NULL;
    }
    res->net = net;
}

static void *work(void *arg)
{
    worker *w = arg;
    runner *r = w->r;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t k = r->next < r->queued ? r->queue[r->next++] : (size_t)-1;
        pthread_mutex_unlock(&r->lock);
        if (k == (size_t)-1)
            return NULL;
        run_one(w, k);
    }
}

/* Work of an experiment, to start the largest first: epochs x training samples. */
static double work_of(const clg_experiment *e)
{
    return (double)e->options.max_epochs * (double)clg_datastore_size(e->train);
}

clg_status clg_experiments_run(clg_ctx *const *ctxs, size_t nctx, const clg_experiment *e,
                               size_t n, clg_experiment_progress_fn progress, void *user,
                               clg_experiment_result *results)
{
    if (!ctxs || !nctx || (n && (!e || !results)))
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_experiments_run: contexts, experiments "
                         "and results must not be NULL, at least one context");
    for (size_t i = 0; i < nctx; i++)
        if (!ctxs[i])
            return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_experiments_run: context %zu is NULL",
                             i);
    runner r = {ctxs, e, results, NULL, 0, 0, progress, user, PTHREAD_MUTEX_INITIALIZER};
    r.queue = clg__malloc((n ? n : 1) * sizeof *r.queue);
    worker *w = clg__calloc(nctx, sizeof *w);
    pthread_t *tid = clg__calloc(nctx, sizeof *tid);
    int *started = clg__calloc(nctx, sizeof *started);
    if (!r.queue || !w || !tid || !started) {
        free(r.queue), free(w), free(tid), free(started);
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_experiments_run: out of host "
                         "memory");
    }
    for (size_t i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof results[i]);
        snprintf(results[i].name, sizeof results[i].name, "%s", e[i].name ? e[i].name : "");
        if (!e[i].train) { /* fails alone */
            results[i].status = CLG_ERR_INVALID_ARG;
            snprintf(results[i].error, sizeof results[i].error, "no training data");
            continue;
        }
        size_t k = r.queued++; /* insertion sort: largest work first, then by index */
        while (k > 0 && work_of(&e[r.queue[k - 1]]) < work_of(&e[i])) {
            r.queue[k] = r.queue[k - 1];
            k--;
        }
        r.queue[k] = i;
    }
    for (size_t d = 0; d < nctx; d++) {
        w[d] = (worker){&r, d, 0};
        started[d] = pthread_create(&tid[d], NULL, work, &w[d]) == 0;
    }
    int any = 0;
    for (size_t d = 0; d < nctx; d++)
        any |= started[d];
    if (!any)
        work(&w[0]); /* no thread to be had: everything on the first context, here */
    for (size_t d = 0; d < nctx; d++)
        if (started[d])
            pthread_join(tid[d], NULL);
    free(r.queue), free(w), free(tid), free(started);
    pthread_mutex_destroy(&r.lock);
    return CLG_OK;
}
