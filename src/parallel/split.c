/* Mini-batch split in proportion to device weights (largest remainder: deterministic, exact). */
#include <math.h>
#include <stdlib.h>

#include "clgrad/parallel.h"
#include "runtime/runtime_internal.h"

clg_status clg_split_batch(size_t batch, const float *weights, size_t n, size_t *counts)
{
    if (!n || !weights || !counts)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                         "clg_split_batch: weights and counts must not be NULL, n > 0");
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!(weights[i] >= 0.0f) || !isfinite(weights[i]))
            return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                             "clg_split_batch: weight %zu is %g; weights must be finite and >= 0",
                             i, (double)weights[i]);
        sum += weights[i];
    }
    if (!(sum > 0.0))
        return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                         "clg_split_batch: every weight is 0 (at least one device must work)");
    size_t given = 0;
    for (size_t i = 0; i < n; i++) {
        counts[i] = (size_t)floor((double)batch * weights[i] / sum);
        given += counts[i];
    }
    while (given < batch) { /* the rest, one each, to the largest remainders */
        size_t best = n;
        double best_rem = -1.0;
        for (size_t i = 0; i < n; i++) {
            if (weights[i] <= 0.0f)
                continue;
            double rem = (double)batch * weights[i] / sum - (double)counts[i];
            if (rem > best_rem) {
                best_rem = rem;
                best = i;
            }
        }
        counts[best]++;
        given++;
    }
    return CLG_OK;
}
