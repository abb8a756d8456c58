/* Input normalisation, as MATLAB's imageInputLayer "zerocenter"/"zscore" with given values:
 * (x - mean[c]) / std[c] per channel, applied on the device to each batch as it is uploaded,
 * so every path that feeds the network (training on any number of devices, prediction,
 * evaluation, activations) sees it, and kept in the input line of the text form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"
#include "ops/activation_internal.h"

clg_status clg_net_set_input_normalization(clg_net *net, const float *mean, const float *std,
                                           size_t count)
{
    if (!net || (count && (!mean || !std)))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_set_input_normalization: net, and with a count mean and std, "
                         "must not be NULL");
    size_t c = net->input.c;
    if (count != 0 && count != 1 && count != c)
        return clg__fail(net->ctx, CLG_ERR_SHAPE, "clg_net_set_input_normalization: %zu values "
                         "for an input of %zu channels (give %zu, or 1 for all)", count, c, c);
    for (size_t k = 0; k < count; k++)
        if (!isfinite(mean[k]) || !(std[k] > 0.0f) || !isfinite(std[k]))
            return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_set_input_normalization: "
                             "channel %zu: mean %g, std %g (finite, std > 0)", k,
                             (double)mean[k], (double)std[k]);
    float *v = count ? clg__malloc(2 * c * sizeof *v) : NULL;
    if (count && !v)
        return clg__oom(net->ctx, "clg_net_set_input_normalization");
    for (size_t k = 0; k < c && count; k++)
        v[k] = mean[count == 1 ? 0 : k], v[c + k] = std[count == 1 ? 0 : k];
    free(net->in_norm);
    net->in_norm = v;
    clg_tensor_destroy(net->in_norm_t); /* made again, with these values, at the next upload */
    net->in_norm_t = NULL;
    return CLG_OK;
}

clg_status clg_net_input_normalization(const clg_net *net, float *mean, float *std, size_t cap,
                                       size_t *count)
{
    if (count)
        *count = 0;
    if (!net || !count || (cap && (!mean || !std)))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_input_normalization: net and count must not be NULL (mean "
                         "and std neither with a cap)");
    size_t c = net->in_norm ? net->input.c : 0;
    if (c > cap)
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG, "clg_net_input_normalization: %zu "
                         "channels, room for %zu", c, cap);
    if (c) {
        memcpy(mean, net->in_norm, c * sizeof *mean);
        memcpy(std, net->in_norm + c, c * sizeof *std);
    }
    *count = c;
    return CLG_OK;
}

size_t clg__norm_text(const float *ms, size_t c, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap)
        buf[0] = '\0';
    for (int which = 0; ms && which < 2; which++) {
        const float *v = ms + (which ? c : 0);
        size_t n = 1;
        for (size_t k = 1; k < c && n == 1; k++)
            n = v[k] == v[0] ? 1 : c;
        at += (size_t)snprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, " %s=",
                               which ? "std" : "mean");
        for (size_t k = 0; k < n; k++)
            at += (size_t)snprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, "%s%.9g",
                                   k ? "," : "", (double)v[k]);
    }
    return at;
}

size_t clg__net_norm_text(const clg_net *net, char *buf, size_t cap)
{
    return clg__norm_text(net->in_norm, net->input.c, buf, cap);
}

/* The uploaded batch x_n, normalised in place (once per upload: the upload wrote it). */
clg_status clg__net_normalise_input(clg_net *net)
{
    if (!net->in_norm)
        return CLG_OK;
    size_t c = net->input.c;
    clg_status st = CLG_OK;
    if (!net->in_norm_t) {
        st = clg_tensor_create(net->ctx, (clg_shape){2 * c, 1, 1, 1}, &net->in_norm_t);
        if (st == CLG_OK)
            st = clg_tensor_upload(net->in_norm_t, net->in_norm, 2 * c);
        if (st != CLG_OK) {
            clg_tensor_destroy(net->in_norm_t);
            net->in_norm_t = NULL;
            return st;
        }
    }
    return clg__channel_normalise(net->ctx, &net->x_n, net->in_norm_t);
}
