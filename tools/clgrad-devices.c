/* clgrad-devices: every OpenCL device in a short table, and which devices each execution
 * environment picks here (honouring CLGRAD_DEVICES or --filter). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clgrad/clgrad.h"
#include "json_out.h"
#include "opts.h"
#include "tool_error.h"

static const clg_exec_env shown_envs[] = {CLG_ENV_AUTO, CLG_ENV_CPU, CLG_ENV_GPU,
                                          CLG_ENV_MULTI_GPU, CLG_ENV_PARALLEL};
#define N_ENVS (sizeof shown_envs / sizeof shown_envs[0])

typedef struct settings {
    int json;
    size_t split;
    const char *filter;
} settings;

static const opt_def defs[] = {
    {OPT_FLAG, "json", offsetof(settings, json), 0, 0,
     .help = "one JSON object instead of the table"},
    {OPT_TEXT, "filter", offsetof(settings, filter), 0, 0, .value = "FILTER",
     .help = "device filter (default: $CLGRAD_DEVICES): comma-separated indices (0,2), "
             "ranges (0-3), types (cpu, gpu, accelerator) or vendor/name substrings"},
    {OPT_SIZE, "split", offsetof(settings, split), 1, 256, .value = "N",
     .help = "also split the first CPU into N sub-devices and list them"},
};

static const opt_tool tool = {
    "clgrad-devices", NULL,
    "usage: clgrad-devices [--json] [--filter FILTER] [--split N]\n"
    "Lists every OpenCL device and the devices each execution environment picks.\n",
    "  -h, --help, --version\n", defs, sizeof defs / sizeof defs[0], 0, 0, NULL};

/* The class the GEMM's default blocks come from (an unknown CLGRAD_CPU_CLASS: the detected
 * one, the tool says so at the start). */
static clg_cpu_class cpu_class(const clg_device_info *d)
{
    clg_cpu_class c = CLG_CPU_CLASS_NONE;
    (void)clg_device_cpu_class(d, &c);
    return c;
}

static void json_device(const clg_device_info *d)
{
    printf("{\"index\":%zu,\"platform\":", d->index);
    json_string(d->platform);
    printf(",\"vendor\":");
    json_string(d->vendor);
    printf(",\"name\":");
    json_string(d->name);
    printf(",\"type\":\"%s\",\"version\":", clg_device_type_name(d->type));
    json_string(d->version);
    printf(",\"driver_version\":");
    json_string(d->driver_version);
    printf(",\"compute_units\":%u,\"clock_mhz\":%u,\"global_mem_bytes\":%llu,"
           "\"local_mem_bytes\":%llu,\"max_alloc_bytes\":%llu,\"fp16\":%s,\"fp64\":%s,"
           "\"vector_width_float\":%u,\"native_vector_width_float\":%u,\"subdevice\":%s,"
           "\"cpu_class\":\"%s\"}",
           d->compute_units, d->clock_mhz, (unsigned long long)d->global_mem_bytes,
           (unsigned long long)d->local_mem_bytes, (unsigned long long)d->max_alloc_bytes,
           d->fp16 ? "true" : "false", d->fp64 ? "true" : "false", d->vec_width_float,
           d->native_vec_width_float,
           d->is_subdevice ? "true" : "false", clg_cpu_class_name(cpu_class(d)));
}



static void table_row(const clg_device_info *d, const char *label)
{
    printf("%-5s %-4s %-24.24s %-40.40s %4u %6u %9.1f %5s %5s  %s\n", label,
           clg_device_type_name(d->type), d->vendor, d->name, d->compute_units, d->clock_mhz,
           (double)d->global_mem_bytes / (1 << 20), d->fp64 ? "yes" : "no",
           d->fp16 ? "yes" : "no", d->type == CLG_DEVICE_CPU ? clg_cpu_class_name(cpu_class(d)) : "-");
}

static void table_header(void)
{
    printf("%-5s %-4s %-24s %-40s %4s %6s %9s %5s %5s  %s\n", "index", "type", "vendor", "name", "CUs",
           "MHz", "mem MiB", "fp64", "fp16", "cpu class");
}

static int show_split(const clg_device_info *all, size_t n, unsigned parts, int json)
{
    size_t cpu = n;
    for (size_t i = 0; i < n && cpu == n; i++)
        if (all[i].type == CLG_DEVICE_CPU)
            cpu = i;
    if (cpu == n) {
        fprintf(stderr, "clgrad-devices: --split: no CPU device to split\n");
        return 1;
    }
    clg_device_info *subs;
    clg_status st = clg_device_split(&all[cpu], parts, 0, &subs);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-devices: %s\n", tool_message(st, clg_last_error()));
        return 1;
    }
    if (json) {
        printf(",\"subdevices\":[");
        for (unsigned i = 0; i < parts; i++) {
            printf(i ? "," : "");
            json_device(&subs[i]);
        }
        printf("]");
    } else {
        printf("\nDevice %zu split into %u sub-devices:\n", cpu, parts);
        table_header();
        for (unsigned i = 0; i < parts; i++) {
            char label[48];
            snprintf(label, sizeof label, "%zu.%u", cpu, i);
            table_row(&subs[i], label);
        }
    }
    clg_devices_free(subs, parts);
    return 0;
}

int main(int argc, char **argv)
{
    settings set = {0};
    size_t nops = 0;
    int parsed = opts_parse(&tool, argc, argv, &set, &nops);
    if (parsed)
        return parsed < 0 ? 0 : parsed;
    int json = set.json;
    unsigned split = (unsigned)set.split;
    const char *filter = set.filter;
    clg_device_info *all;
    size_t n;
    clg_status st = clg_devices_list(&all, &n);
    if (st != CLG_OK) {
        fprintf(stderr, "clgrad-devices: %s\n", tool_message(st, clg_last_error()));
        return 1;
    }
    clg_cpu_class ignored;
    const char *forced = getenv("CLGRAD_CPU_CLASS");
    if (forced && *forced && clg_cpu_class_parse(forced, &ignored) != CLG_OK)
        fprintf(stderr, "clgrad-devices: CLGRAD_CPU_CLASS=%s: expected generic, avx2, avx512-1fma "
                "or avx512-2fma (contexts refuse it; the detected classes are shown)\n", forced);
    int from_env = !filter;
    if (!filter)
        filter = getenv("CLGRAD_DEVICES");
    if (json) {
        printf("{\"devices\":[");
        for (size_t i = 0; i < n; i++) {
            printf(i ? "," : "");
            json_device(&all[i]);
        }
        printf("],\"filter\":");
        json_string(filter ? filter : "");
        printf(",\"environments\":{");
    } else {
        table_header();
        for (size_t i = 0; i < n; i++) {
            char label[48];
            snprintf(label, sizeof label, "%zu", i);
            table_row(&all[i], label);
        }
        printf("\nExecution environments%s%s%s:\n", filter && *filter ? " (filter \"" : "",
               filter && *filter ? filter : "", filter && *filter ? "\")" : "");
    }
    char bad_filter[1024] = "";
    size_t matched = 0;
    for (size_t e = 0; e < N_ENVS; e++) {
        clg_device_info *chosen = NULL;
        size_t count = 0;
        st = clg_devices_select(all, n, shown_envs[e], filter ? filter : "", &chosen, &count);
        if (st == CLG_ERR_INVALID_ARG)
            snprintf(bad_filter, sizeof bad_filter, "%s", clg_last_error());
        if (json) {
            printf("%s\"%s\":[", e ? "," : "", clg_exec_env_name(shown_envs[e]));
            for (size_t j = 0; j < count; j++)
                printf("%s%zu", j ? "," : "", chosen[j].index);
            printf("]");
        } else {
            printf("  %-10s", clg_exec_env_name(shown_envs[e]));
            if (count == 0)
                printf("none");
            for (size_t j = 0; j < count; j++)
                printf("%s%zu", j ? ", " : "", chosen[j].index);
            printf("\n");
        }
        matched += count;
        clg_devices_free(chosen, count);
    }
    if (json)
        printf("}");
    int rc = 0;
    if (split)
        rc = show_split(all, n, split, json);
    if (json)
        printf("}\n");
    if (bad_filter[0]) {
        fprintf(stderr, "clgrad-devices: bad filter: %s\n", bad_filter);
        rc = 2;
    } else if (!matched && filter && *filter) {
        fprintf(stderr, "clgrad-devices: the filter \"%s\"%s matches no device\n", filter,
                from_env ? " (from the environment variable CLGRAD_DEVICES)" : "");
        rc = 1;
    }
    clg_devices_free(all, n);
    return rc;
}
