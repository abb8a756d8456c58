/* Fuzz target: the training state inside a checkpoint (position, validation history, optimizer
 * moments, best parameters), read for a trainer of known shape without device tensors: every
 * input is either accepted within bounds or refused as corrupt or mismatched. */
#include <stdlib.h>
#include <string.h>
#include "fuzz_common.h"
#include "train/train_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    clg__trainer t;
    memset(&t, 0, sizeof t);
    t.o = clg_train_options_default();
    t.batch = 16;
    t.iters_per_epoch = 6;
    t.best_count = 4; /* the best-parameter section must hold exactly 4 floats */
    clg_status st = clg__train_state_load(&t, data, size);
    if (st == CLG_OK && (t.next_iter > t.iters_per_epoch || t.epoch < 0))
        abort(); /* an accepted position lies inside the epoch */
    if (st != CLG_OK && st != CLG_ERR_CORRUPT && st != CLG_ERR_INVALID_ARG &&
        st != CLG_ERR_OUT_OF_HOST_MEMORY)
        abort();
    free(t.best);
    return 0;
}
