/* Fuzz target: device filter strings (CLGRAD_DEVICES) against a synthetic machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clgrad/clgrad.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    clg_device_info d[4];
    memset(d, 0, sizeof d);
    const char *names[4] = {"Intel Xeon", "GeForce RTX", "Radeon", "FPGA"};
    clg_device_type types[4] = {CLG_DEVICE_CPU, CLG_DEVICE_GPU, CLG_DEVICE_GPU, CLG_DEVICE_ACCELERATOR};
    for (int i = 0; i < 4; i++) {
        d[i].index = (size_t)i;
        d[i].type = types[i];
        d[i].platform_index = (size_t)i;
        d[i].compute_units = 4;
        d[i].clock_mhz = 1000;
        snprintf(d[i].name, CLG_INFO_TEXT, "%s", names[i]);
        snprintf(d[i].vendor, CLG_INFO_TEXT, "vendor %d", i);
    }
    char *filter = fuzz_text(data, size);
    for (int env = CLG_ENV_AUTO; filter && env <= CLG_ENV_PARALLEL; env++) {
        clg_device_info *chosen = NULL;
        size_t count = 0;
        clg_status st = clg_devices_select(d, 4, (clg_exec_env)env, filter, &chosen, &count);
        if (st == CLG_OK && (count == 0 || count > 4 || !chosen))
            abort(); /* success must pick something real */
        if (st != CLG_OK && (chosen || count || !clg_last_error()[0]))
            abort(); /* failure leaves nothing and says why */
        for (size_t i = 0; i < count; i++)
            if (chosen[i].index >= 4 || strcmp(chosen[i].name, d[chosen[i].index].name) != 0)
                abort();
        clg_devices_free(chosen, count);
    }
    free(filter);
    return 0;
}
