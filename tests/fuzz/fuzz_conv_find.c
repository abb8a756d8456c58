/* Fuzz target: the per-device file of convolution `find` results. */
#include <stdlib.h>
#include "fuzz_common.h"
#include "ops/conv/conv_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    void *state = clg__conv_find_state_create();
    if (text && state)
        clg__conv_find_parse(state, text);
    clg__conv_find_state_destroy(state);
    free(text);
    return 0;
}
