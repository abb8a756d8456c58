/* clg_net_summary: every layer with its inputs, output shape, parameters and forward FLOPs,
 * and the totals (MATLAB's analyzeNetwork, as text). */
#include <stdio.h>
#include <string.h>

#include "nn/layer_table.h"

/* A whole number with thousands separators. */
static const char *grouped(double v, char out[32])
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", v);
    size_t n = strlen(digits), o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

clg_status clg_net_summary(const clg_net *net, char *buf, size_t cap, size_t *len)
{
    if (len)
        *len = 0;
    if (!net || (!buf && cap))
        return clg__fail(net ? net->ctx : NULL, CLG_ERR_INVALID_ARG,
                         "clg_net_summary: net must not be NULL (buf NULL needs cap 0)");
    clg__text_out o = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    char a[32], b[32], from[CLG_LAYER_INPUTS * CLG_LAYER_NAME];
    clg__text_put(&o, "%4s  %-12s %-34s %-16s %-14s %12s %14s\n", "#", "name", "layer", "inputs",
                  "output CxHxW", "parameters", "FLOPs/image");
    double params = 0, flops = 0;
    for (size_t i = 0; i < net->count; i++) {
        const clg__layer *l = &net->layers[i];
        clg_layer_info info;
        clg_net_layer_info(net, i, &info);
        clg__net_input_names(net, l, 0, from, sizeof from);
        char shape[48];
        snprintf(shape, sizeof shape, "%zux%zux%zu", l->out.c, l->out.h, l->out.w);
        clg__text_put(&o, "%4zu  %-12s %-34.34s %-16.16s %-14s %12s %14s\n", i + 1, l->name,
                      info.text, from, shape, grouped((double)info.params, a),
                      grouped(info.flops, b));
        params += (double)info.params;
        flops += info.flops;
    }
    clg__text_put(&o, "%zu layers, %s learnable parameters, %s FLOPs per image forward "
                  "(training: about 3x)\n", net->count, grouped(params, a), grouped(flops, b));
    clg__text_put(&o, "batch buffers per image: %.1f KiB to train (outputs and gradients), "
                  "%.1f KiB to infer\n",
                  (double)clg__net_train_floats(net) * 4.0 / 1024.0,
                  (double)clg__net_infer_floats(net) * 4.0 / 1024.0);
    for (int which = 0; net->in_norm && which < 2; which++)
        for (size_t c = 0; c < net->input.c; c++)
            clg__text_put(&o, "%s%.9g%s", c ? "," : which ? ", std " : "input normalised: mean ",
                          (double)net->in_norm[which * net->input.c + c],
                          which && c + 1 == net->input.c ? "\n" : "");
    if (len)
        *len = o.n;
    if (cap && o.n >= cap) {
        buf[0] = '\0';
        return clg__fail(net->ctx, CLG_ERR_INVALID_ARG,
                         "clg_net_summary: %zu bytes needed, buffer holds %zu", o.n + 1, cap);
    }
    return CLG_OK;
}
