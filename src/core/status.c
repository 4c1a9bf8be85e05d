/* Thread-local error messages and status names. */
#include "internal.h"
#include <stdio.h>
#include <string.h>

static _Thread_local char tsr__message[512];

tsr_status tsr__fail(tsr_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tsr__message, sizeof tsr__message, fmt, ap);
    va_end(ap);
    /* Messages are one line: fold any newline a caller or a library put in. */
    for (char *c = tsr__message; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    return s;
}

void tsr__clear_error(void) { tsr__message[0] = 0; }

const char *tsr_last_error(void) { return tsr__message; }

const char *tsr_status_name(tsr_status s)
{
    switch (s) {
    case TSR_OK: return "ok";
    case TSR_E_IO: return "i/o error";
    case TSR_E_NOMEM: return "out of memory";
    case TSR_E_NO_DEVICE: return "no CUDA device";
    case TSR_E_DEVICE: return "device error";
    case TSR_E_DEVICE_NOMEM: return "out of device memory";
    case TSR_E_INTERRUPTED: return "interrupted";
    case TSR_E_ARG: return "bad argument";
    case TSR_E_SIZE: return "bad size";
    case TSR_E_FORMAT: return "bad file format";
    case TSR_E_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

int tsr__mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > (size_t)-1 / a) return 0;
    *out = a * b;
    return 1;
}

int tsr__add_size(size_t a, size_t b, size_t *out)
{
    if (b > (size_t)-1 - a) return 0;
    *out = a + b;
    return 1;
}
