/* Fuzz target: program-binary cache entries; any bytes are a miss or an entry whose payload
 * matches its checksum, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "runtime/runtime_internal.h"

static char dir[64];

/* Each input's file is removed after it; the directory goes when the process ends. */
static void remove_dir(void)
{
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char key[32];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/clgrad-fuzz-bincache-%ld", (long)getpid());
        clg__make_dirs(dir);
        atexit(remove_dir);
        /* Inputs may start with the real header of this key or not: use the bytes' own key. */
    }
    if (size >= 48)
        memcpy(key, data + 16, 32); /* the key field of an entry header */
    char hex[65], path[160];
    clg__hex32(key, hex);
    snprintf(path, sizeof path, "%s/%s.bin", dir, hex);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    size_t n = 0;
    int found = 0;
    unsigned char *bin = clg__bincache_load(dir, key, &n, &found);
    if (!found || (bin && n == 0))
        abort();
    free(bin);
    unlink(path);
    return 0;
}
