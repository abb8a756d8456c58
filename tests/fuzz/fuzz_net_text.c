/* Fuzz target: the network text format, parsed without a device. Whatever parses must write
 * itself back as text that parses into the same text (a fixed point). */
#include <stdlib.h>
#include <string.h>
#include "fuzz_common.h"
#include "nn/nn_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    clg_net *net = NULL;
    if (clg__net_parse(NULL, text, &net) == CLG_OK) {
        size_t len;
        if (clg_net_text(net, NULL, 0, &len) != CLG_OK)
            abort();
        char *a = malloc(len + 1);
        if (!a || clg_net_text(net, a, len + 1, NULL) != CLG_OK)
            abort();
        clg_net *again = NULL;
        if (clg__net_parse(NULL, a, &again) != CLG_OK)
            abort(); /* written text must parse */
        char *b = malloc(len + 1);
        if (!b || clg_net_text(again, b, len + 1, NULL) != CLG_OK || strcmp(a, b))
            abort(); /* and describe the same network */
        free(a);
        free(b);
        clg_net_destroy(again);
    } else if (net) {
        abort(); /* a failed parse returns no network */
    }
    clg_net_destroy(net);
    free(text);
    return 0;
}
