/* Evaluation of a network on a whole datastore, in inference mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clgrad/loss.h"
#include "data/data_internal.h"
#include "train/train_internal.h"

clg_status clg__match_to_net(clg_net *net, clg_datastore *ds, const char *what,
                             clg_datastore **view)
{
    *view = NULL;
    const char *const *names = (const char *const *)net->class_names;
    if (!names || net->task == CLG_TASK_REGRESSION ||
        clg__datastore_classes_in_order(ds, names, net->classes))
        return CLG_OK; /* an unnamed model, or the same classes in the same order */
    clg_status st = clg_datastore_match_classes(ds, names, net->classes, view);
    return st == CLG_OK ? st : clg__fail(net->ctx, st, "%s: %s", what, clg_last_error());
}

static clg_status evaluate(clg_net *net, clg_datastore *ds, size_t batch, double *loss,
                           double *accuracy, size_t *counts);

clg_status clg_net_evaluate_confusion(clg_net *net, clg_datastore *ds, size_t batch,
                                      double *loss, double *accuracy, size_t *counts)
{
    if (!net || !ds || !batch)
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_evaluate: net and ds must not be NULL and batch must be > 0");
    clg_datastore *matched = NULL;
    clg_status st = clg__match_to_net(net, ds, "clg_net_evaluate", &matched);
    if (st == CLG_OK)
        st = evaluate(net, matched ? matched : ds, batch, loss, accuracy, counts);
    clg_datastore_destroy(matched);
    return st;
}

clg_status clg_net_evaluate(clg_net *net, clg_datastore *ds, size_t batch, double *loss,
                            double *accuracy)
{
    return clg_net_evaluate_confusion(net, ds, batch, loss, accuracy, NULL);
}

/* Adds the batch's (true, most likely) pairs to counts, from the logits (the softmax keeps
 * their order): a pair per sample, or per labelled pixel for segmentation. */
static clg_status confusion_add(clg_net *net, const int32_t *labels, size_t m, float *logits,
                                size_t *counts)
{
    size_t K = net->classes, out = clg__net_output_values(net), HW = out / K;
    int pixels = net->task == CLG_TASK_SEGMENTATION;
    clg_status st = clg_tensor_download(clg__net_logits(net), logits, m * out);
    for (size_t i = 0; st == CLG_OK && i < m * HW; i++) {
        /* sample i / HW, pixel i % HW: its K values HW apart (a sample's: HW = 1) */
        const float *z = logits + (i / HW) * out + i % HW;
        if (pixels && labels[i] == CLG_LABEL_IGNORE)
            continue;
        size_t best = 0;
        for (size_t k = 1; k < K; k++)
            best = z[k * HW] > z[best * HW] ? k : best;
        counts[(size_t)labels[i] * K + best]++;
    }
    return st;
}

size_t clg__count_labelled(const clg_net *net, const int32_t *labels, size_t n, long long *bad)
{
    size_t k = 0;
    *bad = -1;
    for (size_t i = 0; i < n; i++) {
        if (net->task == CLG_TASK_SEGMENTATION && labels[i] == CLG_LABEL_IGNORE)
            continue;
        if (labels[i] < 0 || (size_t)labels[i] >= net->classes) {
            *bad = (long long)i;
            return k;
        }
        k++;
    }
    return k;
}

double clg__task_metric(const clg_net *net, double loss, size_t correct, size_t units)
{
    if (net->task != CLG_TASK_REGRESSION)
        return units ? (double)correct / (double)units : 0.0;
    const clg__layer *out = &net->layers[net->count - 1];
    return out->regress == CLG_REGRESSION_L1 ? loss : sqrt(2.0 * (loss > 0.0 ? loss : 0.0));
}

clg_status clg__check_data(clg_net *net, clg_datastore *ds, const char *what)
{
    clg_shape s = clg_datastore_sample_shape(ds), t, o = clg_net_output_shape(net);
    if (s.c != net->input.c || s.h != net->input.h || s.w != net->input.w)
        return clg__fail(net->ctx, CLG_ERR_SHAPE, "%s: samples are %zux%zux%zu (CxHxW), the net "
                         "takes %zux%zux%zu", what, s.c, s.h, s.w, net->input.c, net->input.h,
                         net->input.w);
    clg_target_kind kind = clg_datastore_target(ds, &t);
    static const char *const kinds[] = {"a class per sample", "a class per pixel", "values"};
    static const clg_target_kind wants[] = {CLG_TARGET_CLASS, CLG_TARGET_CLASS, CLG_TARGET_PIXELS,
                                            CLG_TARGET_VALUES};
    static const char *const tasks[] = {"no output", "classification", "segmentation",
                                        "regression"};
    if (net->task == CLG_TASK_NONE || kind != wants[net->task])
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "%s: the data's targets are %s, the net "
                         "is for %s (its output layer)", what, kinds[kind], tasks[net->task]);
    if (kind == CLG_TARGET_PIXELS && (t.h != o.h || t.w != o.w))
        return clg__fail(net->ctx, CLG_ERR_SHAPE, "%s: label maps are %zux%zu, the net's output "
                         "%zux%zu", what, t.h, t.w, o.h, o.w);
    if (kind == CLG_TARGET_VALUES && clg_shape_numel(t) != clg_shape_numel(o))
        return clg__fail(net->ctx, CLG_ERR_SHAPE, "%s: targets are %zux%zux%zu (CxHxW), the "
                         "net's output %zux%zux%zu", what, t.c, t.h, t.w, o.c, o.h, o.w);
    return CLG_OK;
}

static clg_status evaluate(clg_net *net, clg_datastore *ds, size_t batch, double *loss,
                           double *accuracy, size_t *counts)
{
    clg_status st = clg__check_data(net, ds, "clg_net_evaluate");
    if (st != CLG_OK)
        return st;
    clg_shape s = clg_datastore_sample_shape(ds);
    size_t n = clg_datastore_size(ds), per = clg_shape_numel(s);
    size_t tper = clg__net_target_values(net), out = clg__net_output_values(net);
    if (batch > n)
        batch = n ? n : 1;
    st = clg__net_reserve_infer(net, batch);
    float *images = st == CLG_OK ? clg__malloc(batch * per * sizeof *images) : NULL;
    int32_t *targets = st == CLG_OK ? clg__malloc(batch * tper * 4) : NULL;
    size_t *idx = st == CLG_OK ? clg__malloc(batch * sizeof *idx) : NULL;
    int confusion = counts && net->task != CLG_TASK_REGRESSION;
    float *logits = st == CLG_OK && confusion ? clg__malloc(batch * out * sizeof *logits) : NULL;
    if (confusion)
        memset(counts, 0, net->classes * net->classes * sizeof *counts);
    if (st == CLG_OK && (!images || !targets || !idx || (confusion && !logits)))
        st = clg__oom(net->ctx, "clg_net_evaluate");
    double total = 0.0;
    size_t correct = 0, units = 0;
    for (size_t done = 0; st == CLG_OK && done < n;) {
        size_t m = n - done < batch ? n - done : batch, c = 0;
        double mean = 0.0;
        for (size_t i = 0; i < m; i++)
            idx[i] = done + i;
        st = clg_datastore_read(ds, idx, m, images, targets);
        if (st != CLG_OK)
            st = clg__fail(net->ctx, st, "%s", clg_datastore_last_error(ds));
        long long bad = -1;
        if (st == CLG_OK && net->task != CLG_TASK_REGRESSION)
            units += clg__count_labelled(net, targets, m * tper, &bad);
        if (bad >= 0)
            st = clg__fail(net->ctx, CLG_ERR_SHAPE, "clg_net_evaluate: label %d of sample "
                           "%zu is outside the net's %zu classes", targets[bad],
                           done + (size_t)bad / tper, net->classes);
        if (st == CLG_OK)
            st = clg__net_upload(net, images, m);
        if (st == CLG_OK)
            st = clg__net_forward(net, 0, 0);
        if (st == CLG_OK)
            st = clg__net_loss(net, targets, &mean, &c);
        if (st == CLG_OK && confusion)
            st = confusion_add(net, targets, m, logits, counts);
        total += mean * (double)m;
        correct += c;
        done += m;
    }
    free(images);
    free(targets);
    free(idx);
    free(logits);
    if (st == CLG_OK) {
        double mean = n ? total / (double)n : 0.0;
        if (loss)
            *loss = mean;
        if (accuracy)
            *accuracy = clg__task_metric(net, mean, correct, units);
    }
    return st;
}
