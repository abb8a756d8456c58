/* Fuzz target: ONNX models. The input is unpacked by protobuf-c as clg_net_import_onnx does,
 * translated into network text with every check of the import (tensor sizes, attributes,
 * names, graph order) and the text parsed, without a device. */
#include <stdlib.h>
#include "fuzz_common.h"
#include "nn/nn_internal.h"
#include "nn/onnx_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m)
        return 0;
    char *text = NULL;
    if (m->graph && clg__onnx_translate(m, &text) == CLG_OK) {
        clg_net *net = NULL;
        clg__net_parse(NULL, text, &net);
        clg_net_destroy(net);
    }
    free(text);
    onnx__model_proto__free_unpacked(m, NULL);
    return 0;
}
