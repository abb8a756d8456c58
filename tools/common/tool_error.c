/* Library failures in the tools' words (tool_error.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tool_error.h"

/* The status in words, for a failure without a message. */
static const char *words(clg_status st)
{
    switch (st) {
    case CLG_ERR_INVALID_ARG: return "invalid argument";
    case CLG_ERR_SHAPE: return "shapes that do not fit together";
    case CLG_ERR_NO_DEVICE: return "no OpenCL device";
    case CLG_ERR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
    case CLG_ERR_OUT_OF_HOST_MEMORY: return "out of memory";
    case CLG_ERR_BUILD: return "an OpenCL program failed to compile";
    case CLG_ERR_OPENCL: return "OpenCL error";
    case CLG_ERR_IO: return "a file could not be read or written";
    case CLG_ERR_CORRUPT: return "invalid file contents";
    case CLG_ERR_UNSUPPORTED: return "not supported";
    case CLG_ERR_DEVICE_LOST: return "a device stopped answering";
    case CLG_ERR_INTERNAL: return "internal error";
    case CLG_ERR_NUMERICS: return "NaN or infinite values";
    default: return "failed";
    }
}

/* Past the "clg_word: " prefixes that lead msg. */
static const char *without_call_names(const char *msg)
{
    for (;;) {
        const char *p = msg;
        if (strncmp(p, "clg_", 4))
            return msg;
        p += 4;
        while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')
            p++;
        if (p[0] != ':' || p[1] != ' ')
            return msg;
        msg = p + 2;
    }
}

const char *tool_message(clg_status st, const char *msg)
{
    static _Thread_local char text[4096];
    const char *m = msg && *msg ? without_call_names(msg) : words(st);
    snprintf(text, sizeof text, "%s%s", m,
             st == CLG_ERR_INTERNAL ? " (a bug in clgrad: please report it)" : "");
    return text;
}
