/* Fuzz target: IDX headers and sizes, as image and as label files; an accepted file's data
 * lies exactly inside the input. */
#include <stdlib.h>
#include "fuzz_common.h"
#include "data/data_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[256];
    for (int images = 0; images < 2; images++) {
        clg__idx_info info;
        if (clg__idx_parse(data, size, images, &info, msg, sizeof msg) != CLG_OK)
            continue;
        size_t bytes = info.count * info.c * info.h * info.w;
        if (info.data < data || info.data + bytes != data + size)
            abort();
        unsigned sum = 0; /* touch the data: ASan reports a read past the input */
        for (size_t i = 0; i < bytes; i += 4096)
            sum += info.data[i];
        if (bytes && sum == 0xFFFFFFFFu)
            abort();
    }
    return 0;
}
