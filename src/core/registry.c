/* The table of operations and their variants, parameter handling, and the one place where
 * arguments are checked and work is dispatched to a backend. */
#include "internal.h"
#include "ops.h"
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operations in CLI order, each with its CPU and CUDA variant tables (terminated by name NULL). */
static struct {
    tsr_op *op;
    const tsr_variant *cpu;
    const tsr_variant *cuda;
} tsr__table[] = {
#ifdef TSR_HAVE_CUDA
#define TSR_CUDA_TABLE(x) x
#else
#define TSR_CUDA_TABLE(x) NULL
#endif
    {&tsr__op_invert, tsr__invert_cpu, TSR_CUDA_TABLE(tsr__invert_cuda)},
    {&tsr__op_box, tsr__box_cpu, TSR_CUDA_TABLE(tsr__box_cuda)},
    {&tsr__op_threshold, tsr__threshold_cpu, TSR_CUDA_TABLE(tsr__threshold_cuda)},
    {&tsr__op_sums, tsr__sums_cpu, TSR_CUDA_TABLE(tsr__sums_cuda)},
    {&tsr__op_gray, tsr__gray_cpu, TSR_CUDA_TABLE(tsr__gray_cuda)},
    {&tsr__op_resize, tsr__resize_cpu, TSR_CUDA_TABLE(tsr__resize_cuda)},
};
#define TSR_NOPS ((int)(sizeof tsr__table / sizeof tsr__table[0]))
#define TSR_MAX_VARIANTS 32

static const tsr_variant *tsr__variant_lists[TSR_NOPS][TSR_MAX_VARIANTS + 1];
static pthread_once_t tsr__once = PTHREAD_ONCE_INIT;

static void tsr__init_registry(void)
{
    for (int i = 0; i < TSR_NOPS; i++) {
        int n = 0;
        const tsr_variant *lists[2] = {tsr__table[i].cpu, tsr__table[i].cuda};
        for (int l = 0; l < 2; l++)
            for (const tsr_variant *v = lists[l]; v && v->name && n < TSR_MAX_VARIANTS; v++)
                tsr__variant_lists[i][n++] = v;
        tsr__variant_lists[i][n] = NULL;
        tsr__table[i].op->variants = tsr__variant_lists[i];
    }
}

int tsr_op_count(void) { return TSR_NOPS; }

const tsr_op *tsr_op_at(int i)
{
    pthread_once(&tsr__once, tsr__init_registry);
    return i >= 0 && i < TSR_NOPS ? tsr__table[i].op : NULL;
}

const tsr_op *tsr_op_find(const char *name)
{
    pthread_once(&tsr__once, tsr__init_registry);
    for (int i = 0; i < TSR_NOPS; i++)
        if (!strcmp(tsr__table[i].op->name, name)) return tsr__table[i].op;
    return NULL;
}

/* ---------------------------------------------------------------- parameters */

double tsr__param_get(const tsr_param *p, const void *params)
{
    const char *base = (const char *)params + p->offset;
    if (p->type == TSR_P_REAL) {
        double d;
        memcpy(&d, base, sizeof d);
        return d;
    } else {
        int i;
        memcpy(&i, base, sizeof i);
        return i;
    }
}

void tsr__param_set(const tsr_param *p, void *params, double v)
{
    char *base = (char *)params + p->offset;
    if (p->type == TSR_P_REAL) {
        memcpy(base, &v, sizeof v);
    } else {
        int i = (int)v;
        memcpy(base, &i, sizeof i);
    }
}

void tsr_params_default(const tsr_op *op, void *params)
{
    memset(params, 0, op->params_size);
    for (int i = 0; i < op->nparams; i++) tsr__param_set(&op->params[i], params, op->params[i].def);
}

tsr_status tsr_params_check(const tsr_op *op, const void *params)
{
    for (int i = 0; i < op->nparams; i++) {
        const tsr_param *p = &op->params[i];
        double v = tsr__param_get(p, params);
        if (!(v >= p->min && v <= p->max)) {   /* also rejects NaN */
            if (p->type == TSR_P_REAL)
                return tsr__fail(TSR_E_ARG, "%s: --%s %g is out of range [%g, %g]", op->name, p->name, v, p->min,
                                 p->max);
            return tsr__fail(TSR_E_ARG, "%s: --%s %.0f is out of range [%.0f, %.0f]", op->name, p->name, v, p->min,
                             p->max);
        }
    }
    return TSR_OK;
}

/* ---------------------------------------------------------------- dispatch */

static int tsr__log_flag = -1;

void tsr_set_log(int on) { tsr__log_flag = on; }

int tsr__log_enabled(void)
{
    if (tsr__log_flag < 0) {
        const char *e = getenv("TSR_LOG");
        tsr__log_flag = e && *e && strcmp(e, "0") != 0;
    }
    return tsr__log_flag;
}

const char *tsr_backend_name(tsr_backend b)
{
    return b == TSR_BACKEND_CPU ? "cpu" : b == TSR_BACKEND_CUDA ? "cuda" : "auto";
}

tsr_backend tsr_resolve_backend(const tsr_exec *ex, tsr_memory memory)
{
    tsr_backend b = ex ? ex->backend : TSR_BACKEND_AUTO;
    if (b != TSR_BACKEND_AUTO) return b;
    if (memory == TSR_DEVICE) return TSR_BACKEND_CUDA;
    return tsr__cuda_available() ? TSR_BACKEND_CUDA : TSR_BACKEND_CPU;
}

/* The environment's variant override for an op: TSR_VARIANT_<OP> (upper case). */
static const char *tsr__env_variant(const tsr_op *op)
{
    char key[64] = "TSR_VARIANT_";
    size_t k = strlen(key);
    for (const char *c = op->name; *c && k + 1 < sizeof key; c++) key[k++] = (char)toupper((unsigned char)*c);
    key[k] = 0;
    return getenv(key);
}

/* See internal.h. */
int tsr__takes_by_default(const tsr_variant *v, tsr_backend backend, const tsr_image *src, const void *params)
{
    return (backend == TSR_BACKEND_AUTO || v->backend == backend) && v->is_default &&
           (!v->supports || v->supports(src, params)) && (!v->prefer || v->prefer(src, params));
}

/* The op's variant names by backend into buf ("cpu: reference, running; cuda: ..."), only
 * backend's unless it is AUTO, for a message; cut short where buf is too small. */
static void tsr__variant_names(const tsr_op *op, tsr_backend backend, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (int b = TSR_BACKEND_CPU; b <= TSR_BACKEND_CUDA; b++) {
        int first = 1;
        if (backend != TSR_BACKEND_AUTO && backend != (tsr_backend)b) continue;
        for (int i = 0; op->variants[i] && n < size; i++) {
            if (op->variants[i]->backend != (tsr_backend)b) continue;
            if (first) n += (size_t)snprintf(buf + n, size - n, "%s%s: ", n ? "; " : "", tsr_backend_name((tsr_backend)b));
            if (n < size) n += (size_t)snprintf(buf + n, size - n, "%s%s", first ? "" : ", ", op->variants[i]->name);
            first = 0;
        }
    }
}

/* Pick a variant; on failure *status says why (unknown name, unsupported input, no backend). */
static const tsr_variant *tsr__choose(const tsr_op *op, tsr_backend backend, const tsr_image *src,
                                      const void *params, const char *name, tsr_status *status)
{
    const tsr_variant *const *vs = op->variants;
    if (name && *name) {
        for (int i = 0; vs[i]; i++) {
            if (strcmp(vs[i]->name, name) != 0 || (backend != TSR_BACKEND_AUTO && vs[i]->backend != backend)) continue;
            if (vs[i]->supports && !vs[i]->supports(src, params)) {
                *status = tsr__fail(TSR_E_UNSUPPORTED, "%s: variant '%s' does not handle these parameters or this image",
                          op->name, name);
                return NULL;
            }
            return vs[i];
        }
        char names[512];
        tsr__variant_names(op, backend, names, sizeof names);
        *status = tsr__fail(TSR_E_ARG, "%s: no %s%svariant named '%s' (%s)", op->name,
                            backend == TSR_BACKEND_AUTO ? "" : tsr_backend_name(backend),
                            backend == TSR_BACKEND_AUTO ? "" : " ", name, *names ? names : "none registered");
        return NULL;
    }
    /* Defaults first, then the reference, then anything that fits. */
    for (int i = 0; vs[i]; i++)
        if (tsr__takes_by_default(vs[i], backend, src, params)) return vs[i];
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; vs[i]; i++) {
            const tsr_variant *v = vs[i];
            if (backend != TSR_BACKEND_AUTO && v->backend != backend) continue;
            if ((pass == 0 && !v->is_default) || (pass == 1 && !v->is_reference)) continue;
            if (v->supports && !v->supports(src, params)) continue;
            return v;
        }
    *status = tsr__fail(backend == TSR_BACKEND_CUDA && !tsr_cuda_compiled() ? TSR_E_NO_DEVICE : TSR_E_UNSUPPORTED,
              "%s: no %s variant handles this input%s", op->name, tsr_backend_name(backend),
              backend == TSR_BACKEND_CUDA && !tsr_cuda_compiled() ? " (this build has no CUDA backend)" : "");
    return NULL;
}

/* Whether a default variant of this backend handles these inputs. */
static int tsr__has_default(const tsr_op *op, tsr_backend backend, const tsr_image *src, const void *params)
{
    for (int i = 0; op->variants[i]; i++) {
        const tsr_variant *v = op->variants[i];
        if (v->backend == backend && v->is_default && (!v->supports || v->supports(src, params))) return 1;
    }
    return 0;
}

/* The variant tsr_run uses: a named one (exec, else TSR_VARIANT_<OP>) decides the backend under
 * AUTO; otherwise the backend resolves first and its default variant is taken. */
static const tsr_variant *tsr__select(const tsr_op *op, const tsr_exec *ex, const tsr_image *src, const void *params,
                                      tsr_status *status)
{
    const char *vname = ex->variant && *ex->variant ? ex->variant : tsr__env_variant(op);
    tsr_backend backend = ex->backend;
    const tsr_variant *v;
    if (ex->backend == TSR_BACKEND_CUDA && !tsr__cuda_available()) {
        *status = tsr__fail(TSR_E_NO_DEVICE, "%s: the CUDA backend was requested but %s", op->name,
                            tsr_cuda_compiled() ? "no usable CUDA device was found" : "this build has no CUDA support");
        return NULL;
    }
    if (!(vname && *vname && backend == TSR_BACKEND_AUTO)) backend = tsr_resolve_backend(ex, src->memory);
    /* Under auto, inputs that no default GPU variant handles (huge radii, say) go to the CPU's
     * default rather than to one of the slow seed kernels that handle anything. */
    if (ex->backend == TSR_BACKEND_AUTO && !(vname && *vname) && backend == TSR_BACKEND_CUDA &&
        !tsr__has_default(op, TSR_BACKEND_CUDA, src, params))
        backend = TSR_BACKEND_CPU;
    v = tsr__choose(op, backend, src, params, vname, status);
    if (v && v->backend == TSR_BACKEND_CUDA && !tsr__cuda_available()) {
        *status = tsr__fail(TSR_E_NO_DEVICE, "%s: variant '%s' needs a CUDA device and none is usable", op->name,
                            v->name);
        return NULL;
    }
    return v;
}

const tsr_variant *tsr_choose_variant(const tsr_op *op, const tsr_exec *ex, const tsr_image *src, const void *params)
{
    tsr_exec defaults = {TSR_BACKEND_AUTO, NULL, NULL, 0};
    tsr_status s;
    if (!op || !src) return NULL;
    if (!op->variants) tsr_op_at(0);
    return tsr__select(op, ex ? ex : &defaults, src, params, &s);
}

/* Move 'img' into memory 'mem' as a new owned image (a copy), synchronously. */
static tsr_status tsr__transfer(const tsr_image *img, tsr_memory mem, tsr_image *out, void *stream)
{
    tsr_image t;
    tsr_status s = tsr_image_create(&t, img->width, img->height, img->channels, img->depth, mem);
    if (s) return s;
    s = tsr_image_copy(img, &t, stream);
    if (!s) s = tsr__cuda_sync(stream);
    if (s) {
        tsr_image_free(&t);
        return s;
    }
    *out = t;
    return TSR_OK;
}

/* Run the chosen variant v: move the input to its memory, give it an output there (the
 * caller's when it lives there), and bring the result back to the caller's memory. */
static tsr_status tsr__run_variant(const tsr_op *op, const tsr_variant *v, const tsr_image *src, tsr_image *dst,
                                   const tsr_image *shape, const void *params, const tsr_exec *ex)
{
    tsr_memory vmem = v->backend == TSR_BACKEND_CUDA ? TSR_DEVICE : TSR_HOST;
    tsr_image out, in_v = {0}, out_v = {0};
    const tsr_image *in = src;
    int need_out_copy;
    tsr_status s;
    if (tsr__log_enabled())
        fprintf(stderr, "tessera: %s: %s variant '%s'\n", op->name, tsr_backend_name(v->backend), v->name);
    if (dst->data && (dst->width != shape->width || dst->height != shape->height || dst->channels != shape->channels ||
                      dst->depth != shape->depth))
        return tsr__fail(TSR_E_SIZE, "%s: the output image is %dx%dx%d/%d-byte, expected %dx%dx%d/%d-byte", op->name,
                         dst->width, dst->height, dst->channels, (int)dst->depth, shape->width, shape->height,
                         shape->channels, (int)shape->depth);
    if (src->memory != vmem) {
        if ((s = tsr__transfer(src, vmem, &in_v, ex->stream))) return s;
        in = &in_v;
    }
    need_out_copy = dst->data ? dst->memory != vmem : src->memory != vmem;
    if (dst->data && !need_out_copy) {
        out = *dst;
    } else {
        s = tsr_image_create(&out_v, shape->width, shape->height, shape->channels, shape->depth, vmem);
        if (s) {
            tsr_image_free(&in_v);
            return s;
        }
        out = out_v;
    }
    s = v->run(in, &out, params, ex);
    if (!s && need_out_copy) {
        if (dst->data) {
            s = tsr_image_copy(&out, dst, ex->stream);
            if (!s) s = tsr__cuda_sync(ex->stream);
        } else {
            tsr_image moved;
            s = tsr__transfer(&out, src->memory, &moved, ex->stream);
            if (!s) *dst = moved;
        }
        tsr_image_free(&out_v);
    } else if (!s && !dst->data) {
        *dst = out_v;          /* hand the new image to the caller */
    } else {
        tsr_image_free(&out_v);
    }
    /* A temporary device input must outlive the kernels queued on it. */
    if (in_v.data && in_v.memory == TSR_DEVICE) {
        tsr_status s2 = tsr__cuda_sync(ex->stream);
        if (!s) s = s2;
    }
    tsr_image_free(&in_v);
    return s;
}

tsr_status tsr_run(const tsr_op *op, const tsr_image *src, tsr_image *dst, const void *params,
                   const tsr_exec *ex)
{
    tsr_exec defaults = {TSR_BACKEND_AUTO, NULL, NULL, 0};
    tsr_image shape;
    const tsr_variant *v;
    tsr_status s;

    if (!op || !src || !dst || !params) return tsr__fail(TSR_E_ARG, "tsr_run: NULL argument");
    if (!ex) ex = &defaults;
    if (!src->data) return tsr__fail(TSR_E_ARG, "%s: the input image has no data", op->name);
    if (src->width <= 0 || src->height <= 0)
        return tsr__fail(TSR_E_SIZE, "%s: the input image is %dx%d", op->name, src->width, src->height);
    if ((s = tsr_params_check(op, params))) return s;
    memset(&shape, 0, sizeof shape);
    if ((s = op->check(src, params, &shape))) return s;

    if (!op->variants) tsr_op_at(0);
    v = tsr__select(op, ex, src, params, &s);
    if (!v) return s;
    s = tsr__run_variant(op, v, src, dst, &shape, params, ex);
    /* Under auto, host images that do not fit in device memory run on the CPU instead. */
    if (s == TSR_E_DEVICE_NOMEM && ex->backend == TSR_BACKEND_AUTO && src->memory == TSR_HOST &&
        (!dst->data || dst->memory == TSR_HOST) && !(ex->variant && *ex->variant) && !tsr__env_variant(op)) {
        tsr_exec cpu = *ex;
        cpu.backend = TSR_BACKEND_CPU;
        cpu.stream = NULL;
        if (tsr__log_enabled()) fprintf(stderr, "tessera: %s: out of device memory, running on the CPU\n", op->name);
        v = tsr__select(op, &cpu, src, params, &s);
        if (v) s = tsr__run_variant(op, v, src, dst, &shape, params, &cpu);
    }
    return s;
}
