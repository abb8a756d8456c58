/* Execution environments and device filters: which listed devices a run uses. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "runtime_internal.h"

static const char *const env_names[] = {"auto", "cpu", "gpu", "multi-gpu", "parallel"};

const char *clg_exec_env_name(clg_exec_env env)
{
    if ((unsigned)env < sizeof env_names / sizeof env_names[0])
        return env_names[env];
    return "unknown";
}

clg_status clg_exec_env_parse(const char *text, clg_exec_env *out)
{
    if (!text || !out)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_exec_env_parse: NULL argument");
    for (unsigned i = 0; i < sizeof env_names / sizeof env_names[0]; i++)
        if (strcasecmp(text, env_names[i]) == 0) {
            *out = (clg_exec_env)i;
            return CLG_OK;
        }
    return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                     "unknown execution environment \"%s\": expected auto, cpu, gpu, multi-gpu "
                     "or parallel", text);
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return n == 0;
}

/* Parses "12" or "3-5" into [lo, hi]; returns 0 when the term is not numeric. */
static int parse_index_term(const char *term, unsigned long *lo, unsigned long *hi)
{
    char *end;
    if (!isdigit((unsigned char)term[0]))
        return 0;
    *lo = *hi = strtoul(term, &end, 10);
    if (*end == '-' && isdigit((unsigned char)end[1]))
        *hi = strtoul(end + 1, &end, 10);
    return *end == '\0';
}

/* Marks keep[i] for every device matching one filter term; *named: it was an index term. */
static clg_status apply_term(const clg_device_info *all, size_t n, const char *term, char *keep,
                             int *named)
{
    unsigned long lo, hi;
    if (parse_index_term(term, &lo, &hi)) {
        *named = 1;
        if (lo > hi || hi >= n)
            return clg__fail(NULL, CLG_ERR_INVALID_ARG,
                             "device filter term \"%s\": indices must lie in 0-%zu", term, n - 1);
        for (unsigned long i = lo; i <= hi; i++)
            keep[i] = 1;
        return CLG_OK;
    }
    for (size_t i = 0; i < n; i++) {
        int is_type = strcasecmp(term, clg_device_type_name(all[i].type)) == 0;
        if (is_type || contains_nocase(all[i].vendor, term) || contains_nocase(all[i].name, term) ||
            contains_nocase(all[i].platform, term))
            keep[i] = 1;
    }
    return CLG_OK;
}

static clg_status apply_filter(const clg_device_info *all, size_t n, const char *filter, char *keep,
                               int *named)
{
    if (!filter || !*filter) {
        memset(keep, 1, n);
        return CLG_OK;
    }
    char *copy = clg__strdup(filter);
    if (!copy)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "device filter: out of memory");
    clg_status st = CLG_OK;
    int terms = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && st == CLG_OK;
         tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (*tok) {
            terms++;
            st = apply_term(all, n, tok, keep, named);
        }
    }
    free(copy);
    if (st == CLG_OK && terms == 0)
        st = clg__fail(NULL, CLG_ERR_INVALID_ARG, "device filter \"%s\" has no terms", filter);
    return st;
}

/* Appends "  0: cpu  vendor name (platform)" lines for every device. */
static void list_devices(const clg_device_info *all, size_t n, char *buf, size_t size)
{
    size_t used = strlen(buf);
    for (size_t i = 0; i < n && used < size; i++) {
        int w = snprintf(buf + used, size - used, "\n  %zu: %s, %s, %s (%s)", i,
                         clg_device_type_name(all[i].type), all[i].vendor, all[i].name,
                         all[i].platform);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* Picks from the candidates what the environment asks for; returns the number kept. Devices
 * the user named by index are all kept under auto and parallel, and all CPUs among them
 * under cpu, whatever their platforms. */
static size_t resolve_env(const clg_device_info *all, size_t n, clg_exec_env env, char *keep,
                          int named)
{
    size_t gpus = 0, cpus = 0, best = n;
    for (size_t i = 0; i < n; i++)
        cpus += keep[i] && all[i].type == CLG_DEVICE_CPU;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i] || all[i].type != CLG_DEVICE_GPU)
            continue;
        gpus++;
        double speed = (double)all[i].compute_units * all[i].clock_mhz;
        if (best == n || speed > (double)all[best].compute_units * all[best].clock_mhz)
            best = i;
    }
    int want_gpu = env == CLG_ENV_GPU || env == CLG_ENV_MULTI_GPU ||
                   ((env == CLG_ENV_AUTO || env == CLG_ENV_PARALLEL) && gpus > 0);
    size_t cpu_platform = (size_t)-1, kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        int k;
        if (named && (env == CLG_ENV_AUTO || env == CLG_ENV_PARALLEL)) {
            k = 1;
        } else if (named && env == CLG_ENV_CPU) {
            k = all[i].type == CLG_DEVICE_CPU;
        } else if (want_gpu) {
            k = all[i].type == CLG_DEVICE_GPU && (env != CLG_ENV_GPU || i == best);
        } else if ((env == CLG_ENV_AUTO || env == CLG_ENV_PARALLEL) && cpus == 0) {
            k = 1; /* neither GPU nor CPU left (say, an accelerator filtered in): take it */
        } else if (all[i].type == CLG_DEVICE_CPU) {
            /* The CPU devices of one platform: several platforms for one CPU (POCL and a
             * vendor runtime) would oversubscribe its cores. */
            if (cpu_platform == (size_t)-1)
                cpu_platform = all[i].platform_index;
            k = all[i].platform_index == cpu_platform;
        } else {
            k = 0;
        }
        keep[i] = (char)k;
        kept += (size_t)k;
    }
    return kept;
}

clg_status clg_devices_select(const clg_device_info *all, size_t n, clg_exec_env env,
                              const char *filter, clg_device_info **out, size_t *count)
{
    if (!out || !count)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_devices_select: out and count must not be NULL");
    *out = NULL;
    *count = 0;
    if (!all || n == 0)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_devices_select: empty device list");
    if ((unsigned)env > CLG_ENV_PARALLEL)
        return clg__fail(NULL, CLG_ERR_INVALID_ARG, "clg_devices_select: unknown environment %d", (int)env);
    int from_env = !filter;
    if (!filter)
        filter = getenv("CLGRAD_DEVICES");
    char *keep = clg__calloc(n, 1);
    if (!keep)
        return clg__fail(NULL, CLG_ERR_OUT_OF_HOST_MEMORY, "clg_devices_select: out of memory");
    int named = 0;
    clg_status st = apply_filter(all, n, filter, keep, &named);
    size_t kept = st == CLG_OK ? resolve_env(all, n, env, keep, named) : 0;
    if (st == CLG_OK && kept == 0) {
        char msg[CLG__ERR_TEXT];
        snprintf(msg, sizeof msg, "no device for execution environment \"%s\"%s%s%s%s; devices "
                 "are:", clg_exec_env_name(env), filter && *filter ? " with filter \"" : "",
                 filter && *filter ? filter : "", filter && *filter ? "\"" : "",
                 filter && *filter && from_env ? " (from the environment variable CLGRAD_DEVICES)"
                                               : "");
        list_devices(all, n, msg, sizeof msg);
        st = clg__fail(NULL, CLG_ERR_NO_DEVICE, "%s", msg);
    }
    clg_device_info *chosen = st == CLG_OK ? clg__malloc(kept * sizeof *chosen) : NULL;
    if (st == CLG_OK && !chosen)
        st = clg__oom(NULL, "clg_devices_select");
    if (st == CLG_OK) {
        size_t j = 0;
        for (size_t i = 0; i < n; i++)
            if (keep[i]) {
                chosen[j] = all[i];
                if (chosen[j].is_subdevice && chosen[j].cl_device) /* clg_devices_free's */
                    clRetainDevice((cl_device_id)chosen[j].cl_device);
                j++;
            }
        *out = chosen;
        *count = kept;
    }
    free(keep);
    return st;
}
