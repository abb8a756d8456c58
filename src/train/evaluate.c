/* Evaluation of a network on a whole datastore, in inference mode. */
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"
#include "train/train_internal.h"

clg_status clg__match_to_net(clg_net *net, clg_datastore *ds, const char *what,
                             clg_datastore **view)
{
    *view = NULL;
    const char *const *names = (const char *const *)net->class_names;
    if (!names || clg__datastore_classes_in_order(ds, names, net->classes))
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
 * their order). */
static clg_status confusion_add(clg_net *net, const int32_t *labels, size_t m, float *logits,
                                size_t *counts)
{
    size_t K = net->classes;
    clg_status st = clg_tensor_download(clg__net_logits(net), logits, m * K);
    for (size_t i = 0; st == CLG_OK && i < m; i++) {
        size_t best = 0;
        for (size_t k = 1; k < K; k++)
            best = logits[i * K + k] > logits[i * K + best] ? k : best;
        counts[(size_t)labels[i] * K + best]++;
    }
    return st;
}

static clg_status evaluate(clg_net *net, clg_datastore *ds, size_t batch, double *loss,
                           double *accuracy, size_t *counts)
{
    clg_shape s = clg_datastore_sample_shape(ds);
    if (s.c != net->input.c || s.h != net->input.h || s.w != net->input.w)
        return clg__fail(net->ctx, CLG_ERR_SHAPE, "clg_net_evaluate: samples are %zux%zux%zu "
                         "(CxHxW), the net takes %zux%zux%zu", s.c, s.h, s.w, net->input.c,
                         net->input.h, net->input.w);
    size_t n = clg_datastore_size(ds), per = clg_shape_numel(s);
    if (batch > n)
        batch = n ? n : 1;
    clg_status st = clg__net_reserve_infer(net, batch);
    float *images = st == CLG_OK ? clg__malloc(batch * per * sizeof *images) : NULL;
    int32_t *labels = st == CLG_OK ? clg__malloc(batch * sizeof *labels) : NULL;
    size_t *idx = st == CLG_OK ? clg__malloc(batch * sizeof *idx) : NULL;
    float *logits = st == CLG_OK && counts ? clg__malloc(batch * net->classes * sizeof *logits)
                                           : NULL;
    if (counts)
        memset(counts, 0, net->classes * net->classes * sizeof *counts);
    if (st == CLG_OK && (!images || !labels || !idx || (counts && !logits)))
        st = clg__oom(net->ctx, "clg_net_evaluate");
    double total = 0.0;
    size_t correct = 0;
    for (size_t done = 0; st == CLG_OK && done < n;) {
        size_t m = n - done < batch ? n - done : batch, c = 0;
        double mean = 0.0;
        for (size_t i = 0; i < m; i++)
            idx[i] = done + i;
        st = clg_datastore_read(ds, idx, m, images, labels);
        if (st != CLG_OK)
            st = clg__fail(net->ctx, st, "%s", clg_datastore_last_error(ds));
        for (size_t i = 0; st == CLG_OK && i < m; i++)
            if (labels[i] < 0 || (size_t)labels[i] >= net->classes)
                st = clg__fail(net->ctx, CLG_ERR_SHAPE, "clg_net_evaluate: label %d of sample "
                               "%zu is outside the net's %zu classes", labels[i], done + i,
                               net->classes);
        if (st == CLG_OK)
            st = clg__net_upload(net, images, m);
        if (st == CLG_OK)
            st = clg__net_forward(net, 0, 0);
        if (st == CLG_OK)
            st = clg__net_loss(net, labels, &mean, &c);
        if (st == CLG_OK && counts)
            st = confusion_add(net, labels, m, logits, counts);
        total += mean * (double)m;
        correct += c;
        done += m;
    }
    free(images);
    free(labels);
    free(idx);
    free(logits);
    if (st == CLG_OK) {
        if (loss)
            *loss = n ? total / (double)n : 0.0;
        if (accuracy)
            *accuracy = n ? (double)correct / (double)n : 0.0;
    }
    return st;
}
