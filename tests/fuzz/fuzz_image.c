/* Fuzz target: image decoding (PNG, JPEG, BMP, PNM through the restricted stb_image), gray and
 * RGB, with resizing to 28x28; every output value must lie in [0, 1]. */
#include <stdlib.h>
#include "fuzz_common.h"
#include "data/data_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static float out[3 * 28 * 28];
    char msg[256];
    for (size_t c = 1; c <= 3; c += 2) {
        if (clg__image_decode(data, size, c, size & 1 ? 32 : 0, 28, 28, out, msg, sizeof msg) != CLG_OK)
            continue;
        for (size_t i = 0; i < c * 28 * 28; i++)
            if (!(out[i] >= 0.0f && out[i] <= 1.0f))
                abort();
    }
    return 0;
}
