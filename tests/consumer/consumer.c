/* Uses the installed public API only: list devices, fill a tensor on the first, read it back. */
#include <stdio.h>
#include <clgrad/clgrad.h>

int main(void)
{
    clg_device_info *devs;
    size_t n;
    clg_ctx *ctx;
    clg_tensor *t;
    float host[6];
    clg_ctx_options o = clg_ctx_options_default();
    o.cache_dir = "off";
    if (clg_devices_list(&devs, &n) != CLG_OK || clg_ctx_create(&devs[0], &o, &ctx) != CLG_OK ||
        clg_tensor_create(ctx, (clg_shape){2, 3, 1, 1}, &t) != CLG_OK ||
        clg_tensor_fill(t, 4.5f) != CLG_OK || clg_tensor_download(t, host, 6) != CLG_OK) {
        fprintf(stderr, "consumer: %s\n", clg_last_error());
        return 1;
    }
    for (int i = 0; i < 6; i++)
        if (host[i] != 4.5f)
            return 1;
    clg_tensor_destroy(t);
    clg_ctx_destroy(ctx);
    clg_devices_free(devs, n);
    printf("consumer ok: clgrad %s on %zu device(s)\n", clg_version(), n);
    return 0;
}
