/* Per-channel statistics of a whole data store, for input normalisation: chunks of samples,
 * each chunk's mean and sum of squared deviations in double, merged into the running ones by
 * Chan et al.'s pairwise update (no cancellation of a sum of squares against a squared sum). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

enum { CHUNK = 64 }; /* samples read at a time */

clg_status clg_datastore_channel_stats(clg_datastore *ds, float *mean, float *std, size_t cap)
{
    if (!ds || !mean || !std)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG, "clg_datastore_channel_stats: ds, "
                                   "mean and std must not be NULL");
    clg_shape s = clg_datastore_sample_shape(ds);
    size_t n = clg_datastore_size(ds), c = s.c, hw = s.h * s.w, per = c * hw;
    if (c > cap)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG, "clg_datastore_channel_stats: %zu "
                                   "channels, room for %zu", c, cap);
    if (!n || !hw)
        return clg__datastore_fail(ds, CLG_ERR_INVALID_ARG, "clg_datastore_channel_stats: the "
                                   "store holds no values");
    float *buf = malloc(CHUNK * per * sizeof *buf);
    size_t *idx = malloc(CHUNK * sizeof *idx);
    double *m = calloc(2 * c, sizeof *m), *m2 = m ? m + c : NULL;
    clg_status st = buf && idx && m ? CLG_OK : CLG_ERR_OUT_OF_HOST_MEMORY;
    if (st != CLG_OK)
        clg__datastore_fail(ds, st, "clg_datastore_channel_stats: out of host memory");
    double count = 0;
    for (size_t first = 0; st == CLG_OK && first < n; first += CHUNK) {
        size_t k = n - first < CHUNK ? n - first : CHUNK;
        for (size_t i = 0; i < k; i++)
            idx[i] = first + i;
        st = clg_datastore_read(ds, idx, k, buf, NULL);
        double nb = (double)(k * hw);
        for (size_t ch = 0; st == CLG_OK && ch < c; ch++) {
            double sum = 0, sq = 0;
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < hw; j++)
                    sum += buf[i * per + ch * hw + j];
            double mb = sum / nb;
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < hw; j++) {
                    double d = buf[i * per + ch * hw + j] - mb;
                    sq += d * d;
                }
            double delta = mb - m[ch], total = count + nb;
            m[ch] += delta * nb / total;
            m2[ch] += sq + delta * delta * count * nb / total;
        }
        count += nb;
    }
    for (size_t ch = 0; st == CLG_OK && ch < c; ch++) {
        double sd = sqrt(m2[ch] / count);
        mean[ch] = (float)m[ch];
        std[ch] = sd > 0 ? (float)sd : 1.0f;
    }
    free(buf), free(idx), free(m);
    return st;
}
