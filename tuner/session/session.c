/* A tuning session as a handle: creating and destroying it, its options,
 * errors and log, the state a tune leaves that the next one clears, and
 * the devices a worker lists. What a tune does lives beside it, one file
 * per stage (session_internal.h lists them). */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "expr/none.h"
#include "session_internal.h"
#include "util.h"

cutune_status cutune__session_fail(cutune_session *s, cutune_status st,
                                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = cutune__vfail(&s->errmsg, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

void cutune__session_log(cutune_session *s, cutune_log_level level,
                         const char *fmt, ...)
{
    if (!s->opt.log)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->opt.log(s->opt.log_user, level, buf);
}

void cutune_session_options_init(cutune_session_options *o)
{
    memset(o, 0, sizeof *o);
    o->write_cache = 1;
    o->seed = 1;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

cutune_status cutune_session_create(const cutune_session_options *options,
                                    cutune_session **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_session *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return CUTUNE_ERR_NO_MEMORY;
    /* GSL's default handler aborts the process; the library reports
     * errors instead. */
    gsl_set_error_handler_off();
    if (options)
        s->opt = *options;
    else
        cutune_session_options_init(&s->opt);
    pthread_mutex_init(&s->lock, NULL);
    s->replay_fail.config = CUTUNE__NONE;
    s->strategy = dup_or_null(s->opt.strategy);
    s->cache_dir = dup_or_null(s->opt.cache_dir);
    s->worker_path = cutune__worker_locate(s->opt.worker_path);
    s->opt.strategy = s->strategy;
    s->opt.cache_dir = s->cache_dir;
    s->opt.worker_path = NULL;
    if ((options && options->strategy && !s->strategy) ||
        (options && options->cache_dir && !s->cache_dir) || !s->worker_path)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (s->strategy && !cutune__strategy_find(s->strategy)) {
        char names[256] = "";
        for (size_t i = 0; cutune__strategies[i]; i++) {
            if (i)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, cutune__strategies[i]->name,
                    sizeof names - strlen(names) - 1);
        }
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "unknown strategy '%s' (known: %s)",
                                    s->strategy, names);
    }
    if (strcmp(cutune_objective_str(s->opt.objective), "unknown") == 0)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "objective %d is none of "
                                    "CUTUNE_OBJECTIVE_* (%s)",
                                    (int)s->opt.objective,
                                    CUTUNE_OBJECTIVE_NAMES);
    s->proto.objective = s->opt.objective;
    s->proto.energy_wanted =
        s->opt.measure_energy || s->opt.objective != CUTUNE_OBJECTIVE_TIME;
    if (cutune__session_init_slots(s) != CUTUNE_OK)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    cutune_status st = cutune__replay_devices_open(s);
    if (st)
        return st;
    /* The one place that asks which device the session measures on. */
    s->dev = s->replay ? &cutune__device_replay : &cutune__device_cuda;
    return CUTUNE_OK;
}

void cutune__session_clear_tune(cutune_session *s)
{
    cutune__measure_log_close(s->record.measured);
    s->record.measured = NULL;
    memset(&s->tel, 0, sizeof s->tel);
    s->record.warned_other_processes = 0;
    s->best_ms = 0;
    s->best_rank = 0;
    s->tuned_with = NULL;
    for (size_t i = 0; i < s->record.n_evals; i++) {
        free((char *)s->record.evals[i].pub.message);
        free(s->record.evals[i].runtimes);
        free(s->record.evals[i].extra_names);
        free(s->record.evals[i].extra_units);
        free(s->record.evals[i].extra_values);
    }
    free(s->record.evals);
    s->record.evals = NULL;
    s->record.n_evals = s->record.cap_evals = 0;
    free(s->proto.ref.cubin);
    s->proto.ref.cubin = NULL;
    free(s->proto.ref.lowered);
    s->proto.ref.lowered = NULL;
    free(s->proto.compare.cubin);
    s->proto.compare.cubin = NULL;
    s->proto.compare.cubin_size = 0;
    free(s->proto.args.wire);
    s->proto.args.wire = NULL;
    free(s->proto.args.payload);
    s->proto.args.payload = NULL;
    free(s->out.best_values);
    free(s->out.baseline_values);
    free(s->out.pub_evals);
    s->out.best_values = s->out.baseline_values = NULL;
    s->out.pub_evals = NULL;
    memset(&s->out.result, 0, sizeof s->out.result);
    s->fatal = 0;
}

void cutune_session_destroy(cutune_session *s)
{
    if (!s)
        return;
    cutune__session_free_slots(s);
    cutune__session_clear_tune(s);
    cutune__replay_devices_close(s);
    pthread_mutex_destroy(&s->lock);
    cutune__binary_cache_close(s->compile.binaries);
    cutune__rejects_free(s->compile.rejected);
    double t0 = cutune__now();
    cutune__compile_procs_destroy(s->compile.compilers);
    if (s->compile.compilers)
        cutune__session_log(s, CUTUNE_LOG_DEBUG,
                            "%.3f s to stop the compile processes",
                            cutune__now() - t0);
    free(s->props);
    free(s->devices);
    free(s->strategy);
    free(s->cache_dir);
    free(s->worker_path);
    free(s->errmsg);
    free(s);
}

const char *cutune_session_errmsg(const cutune_session *s)
{
    if (!s)
        return "out of memory";
    return s->errmsg ? s->errmsg : "no error";
}

/* "<cache dir>/<leaf>" (malloc'ed), the cache directory resolved as the
 * tuning cache resolves it; NULL when there is none or memory ran out. */
char *cutune__session_cache_path(const cutune_session *s, const char *leaf)
{
    cutune_cache *c = NULL;
    char *path = NULL;
    if (cutune_cache_open(s->cache_dir, &c) == CUTUNE_OK)
        path = cutune__strdup_printf("%s/%s", cutune_cache_dir(c), leaf);
    cutune_cache_close(c);
    return path;
}

/* Opens the binary cache beside the tuning cache (<cache dir>/binaries)
 * unless the options turn it off. A cache that cannot be opened only
 * means compiling everything. */
void cutune__session_open_binaries(cutune_session *s)
{
    if (s->compile.binaries || s->opt.no_binary_cache)
        return;
    char *dir = cutune__session_cache_path(s, "binaries");
    if (dir)
        s->compile.binaries = cutune__binary_cache_open(dir, 0);
    free(dir);
}

static const char no_device_hint[] =
    "cutune tunes on an NVIDIA GPU with its driver installed; on a machine "
    "without one, `cutune compile` and `cutune lookup --device-name NAME` "
    "still work";

cutune_status cutune__session_list_devices(cutune_session *s)
{
    return s->dev->list(s);
}

/* The CUDA devices, as the worker lists them. */
cutune_status cutune__cuda_list(cutune_session *s)
{
    cutune__mslot *slot = &s->slots[0];
    cutune_status st = cutune__session_start_worker(s, slot);
    if (st)
        return st;
    cutune__devices_reply *r = NULL;
    cutune__call_result cr =
        cutune__session_call(s, slot, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                             (void **)&r, sizeof *r, 60.0);
    if (cr == CUTUNE__CALL_NOMEM)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (cr != CUTUNE__CALL_OK)
        return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                    "listing CUDA devices: %s",
                                    slot->worker.message);
    free(s->props);
    free(s->devices);
    s->props = NULL;
    s->devices = NULL;
    s->n_devices = 0;
    if (r->count <= 0) {
        st = cutune__session_fail(
            s, CUTUNE_ERR_NO_DEVICE, "no CUDA device found (%s). %s",
            r->head.message[0] ? r->head.message : "count is 0",
            no_device_hint);
        free(r);
        return st;
    }
    size_t n = (size_t)r->count;
    s->props = malloc(n * sizeof *s->props);
    s->devices = malloc(n * sizeof *s->devices);
    if (!s->props || !s->devices) {
        free(r);
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(s->props, r + 1, n * sizeof *s->props);
    for (size_t i = 0; i < n; i++)
        s->devices[i] = s->props[i].fingerprint;
    s->n_devices = n;
    free(r);
    return CUTUNE_OK;
}

cutune_status cutune_session_devices(cutune_session *s,
                                     const cutune_device **devices,
                                     size_t *count)
{
    if (!s || !devices || !count)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_status st = cutune__session_list_devices(s);
    cutune__session_stop_slots(s);
    *devices = s->devices;
    *count = s->n_devices;
    return st;
}
