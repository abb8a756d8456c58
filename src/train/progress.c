/* What training tells: the progress callback's reports, the metrics log's rows, and the
 * elapsed time they give (program builds left out). */
#include <math.h>
#include <stdio.h>

#include "train/train_internal.h"

/* Seconds the training's contexts have spent building programs, the slowest context's (they
 * build at once, one per thread): a first run's kernel compiles, left out of elapsed time and
 * images/s, as they are not training. */
double clg__train_build_seconds(const clg__trainer *t)
{
    double most = 0.0;
    size_t n = t->x.contexts ? t->x.context_count : 1;
    for (size_t i = 0; i < n; i++) {
        clg_ctx_stats s;
        if (clg_ctx_get_stats(t->x.contexts ? t->x.contexts[i] : t->ctx, &s) == CLG_OK &&
            s.build_seconds > most)
            most = s.build_seconds;
    }
    return most;
}

double clg__train_elapsed(const clg__trainer *t)
{
    return t->elapsed_before + clg__now() - t->t0 - (clg__train_build_seconds(t) - t->build0);
}

void clg__train_log_row(clg__trainer *t, const char *kind, double loss, double acc,
                        double vloss, double vacc, float lr)
{
    if (!t->log)
        return;
    fprintf(t->log, "%s,%d,%llu,%.3f,", kind, t->epoch + 1, (unsigned long long)t->step,
            clg__train_elapsed(t));
    if (isnan(loss))
        fprintf(t->log, ",,");
    else
        fprintf(t->log, "%.6f,%.6f,", loss, acc);
    if (isnan(vloss))
        fprintf(t->log, ",,");
    else
        fprintf(t->log, "%.6f,%.6f,", vloss, vacc);
    fprintf(t->log, "%.8g\n", (double)lr);
}

int clg__train_report(clg__trainer *t, clg_progress_kind kind, double loss, double acc,
                      float lr, double images_per_s, const char *text)
{
    if (!t->o.progress)
        return 0;
    clg_train_progress p = {kind, t->epoch + 1, t->o.max_epochs, (size_t)t->step,
                            t->iters_per_epoch, clg__train_elapsed(t), loss, acc, t->has_val,
                            t->val_loss, t->val_acc, lr, images_per_s, text, 1, NULL, NULL};
    if (t->group) {
        p.split = clg__group_split(t->group, &p.devices);
        p.device_ms = clg__group_device_ms(t->group);
    }
    return t->o.progress(&p, t->o.progress_user);
}
