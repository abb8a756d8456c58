/* Fuzz target: GEMM tuning files, parsed for a synthetic device; a file either parses into
 * parameters that pass validation or is rejected as corrupt, leaving the defaults alone. */
#include <stdlib.h>
#include <string.h>
#include "fuzz_common.h"
#include "ops/gemm_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static clg_ctx ctx; /* only the device fields and the error text are used */
    ctx.device.type = CLG_DEVICE_CPU;
    ctx.device.vec_width_float = 16;
    ctx.device.max_work_group_size = 1024;
    ctx.device.local_mem_bytes = 65536;
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    clg_gemm_params p = clg_gemm_params_default(&ctx.device), before = p;
    clg_gemm_backend b[CLG_GEMM_CLASSES] = {CLG_GEMM_BUILTIN, CLG_GEMM_BUILTIN, CLG_GEMM_BUILTIN};
    clg_status st = clg__gemm_tuning_parse(&ctx, text, &p, b);
    if (st == CLG_OK && clg__gemm_params_check(&ctx, &p) != CLG_OK)
        abort(); /* accepted parameters must be valid */
    if (st != CLG_OK && memcmp(&p, &before, sizeof p) != 0)
        abort(); /* a rejected file changes nothing */
    free(text);
    return 0;
}
