/* Helpers shared by the fuzz targets. */
#include <stdlib.h>
#include <string.h>
#include "fuzz_common.h"

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}
