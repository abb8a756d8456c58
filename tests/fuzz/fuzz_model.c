/* Fuzz target: model files. The input becomes the payload of a file with a correct header and
 * checksum (else nearly every input would stop at the checksum), which is then verified and
 * its network section parsed without a device, as clg_net_load does before building. */
#include <stdlib.h>
#include <string.h>
#include <nettle/sha2.h>
#include "fuzz_common.h"
#include "nn/nn_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len = CLG__MODEL_HEADER + size + SHA256_DIGEST_SIZE;
    unsigned char *file = malloc(len);
    if (!file)
        return 0;
    memcpy(file, CLG__MODEL_MAGIC, 8);
    memset(file + 8, 0, 16);
    file[8] = CLG__MODEL_VERSION;
    for (int i = 0; i < 8; i++)
        file[16 + i] = (unsigned char)((uint64_t)size >> (8 * i));
    if (size)
        memcpy(file + CLG__MODEL_HEADER, data, size);
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, len - SHA256_DIGEST_SIZE, file);
    sha256_digest(&h, SHA256_DIGEST_SIZE, file + len - SHA256_DIGEST_SIZE);
    clg__model_sections s;
    if (clg__model_verify(NULL, "fuzz", file, len, &s) == CLG_OK) {
        for (int t = 1; t < 7; t++)
            if (s.data[t] && (s.data[t] < file || s.data[t] + s.len[t] > file + len))
                abort(); /* sections lie inside the file */
        char *text = malloc(s.len[CLG__SEC_NET] + 1);
        if (text) {
            memcpy(text, s.data[CLG__SEC_NET], s.len[CLG__SEC_NET]);
            text[s.len[CLG__SEC_NET]] = '\0';
            clg_net *net = NULL;
            clg__net_parse(NULL, text, &net);
            clg_net_destroy(net);
            free(text);
        }
    }
    free(file);
    return 0;
}
