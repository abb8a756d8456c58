/* libFuzzer entry point shared by the fuzz targets; tests/fuzz/replay.c calls it on every file
 * of a corpus so that the corpus also runs as an ordinary test. */
#ifndef CLGRAD_FUZZ_COMMON_H
#define CLGRAD_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (the parsers take text). Free it. */
char *fuzz_text(const uint8_t *data, size_t size);

#endif
