/* Replayed devices: recorded T4 files standing in for GPUs, so that the
 * paths of a tune on several devices (the slots, the shared search, the
 * final round, the cache records) run where there is no GPU. A slot on a
 * replayed device answers a configuration with its recorded outcome and
 * runtimes (and energy and power, where recorded), after sleeping its
 * recorded compile and run time times the time scale; NVRTC and the
 * worker are skipped. The records are placed on
 * the space by the T4 reader the simulator uses (t4.h). */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expr/none.h"
#include "session_internal.h"
#include "util.h"

/* "replay NAME": the file's name less its folder and "_T4.json.gz" (or
 * ".gz", ".json"), so that two recordings of one GPU model may share a
 * name only when they are one file. */
static void device_name(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    static const char *const tails[] = {"_T4.json.gz", "_T4.json", ".json.gz",
                                        ".json", ".gz"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t t = strlen(tails[i]);
        if (n > t && strcmp(base + n - t, tails[i]) == 0) {
            n -= t;
            break;
        }
    }
    snprintf(out, len, "replay %.*s", (int)n, base);
}

/* "die:N" or "hang:N", N in digits only: strtoull alone would take
 * "die:-1" as the index 2^64 - 1, a hook that never fires. */
static cutune_status parse_fail(cutune_session *s, const char *hook)
{
    int hang = strncmp(hook, "hang:", 5) == 0;
    const char *n = hang                            ? hook + 5
                    : strncmp(hook, "die:", 4) == 0 ? hook + 4
                                                    : "";
    size_t digits = strspn(n, "0123456789");
    errno = 0;
    unsigned long long v = digits ? strtoull(n, NULL, 10) : 0;
    if (!digits || n[digits] || errno)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "CUTUNE_REPLAY_FAIL: '%s' "
                                    "is not die:N or hang:N (N a "
                                    "configuration index, 0 or more)",
                                    hook);
    s->replay_fail.hang = hang;
    s->replay_fail.config = (size_t)v;
    return CUTUNE_OK;
}

/* One replayed device per file of the comma-separated list. The test
 * hook of their failure paths comes from the environment, not from the
 * options: it is nothing a program using the library should set. */
cutune_status cutune__replay_devices_open(cutune_session *s)
{
    const char *list = s->opt.replay_devices;
    s->opt.replay_devices = NULL;
    const char *hook = getenv("CUTUNE_REPLAY_FAIL");
    if (hook && *hook) {
        cutune_status st = parse_fail(s, hook);
        if (st)
            return st;
    }
    if (!list)
        return CUTUNE_OK;
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    s->replay = calloc(n, sizeof *s->replay);
    if (!s->replay)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    const char *p = list;
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(p, ",");
        cutune__replay_device *d = &s->replay[s->n_replay++];
        d->path = strndup(p, len);
        if (!d->path)
            return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY,
                                        "out of memory");
        if (len == 0)
            return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                        "replay_devices: '%s' names an "
                                        "empty file (a list of T4 files, "
                                        "comma-separated)",
                                        list);
        cutune_device *f = &d->props.fingerprint;
        device_name(d->path, f->name, sizeof f->name);
        snprintf(f->cutune_version, sizeof f->cutune_version, "%s",
                 CUTUNE_VERSION_STRING);
        f->simulated = 1;
        p += len + (p[len] == ',');
    }
    return CUTUNE_OK;
}

/* A device whose file an earlier one already holds shares its records. */
static const cutune__replay_device *same_file(const cutune_session *s,
                                              size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(s->replay[k].path, s->replay[i].path) == 0)
            return &s->replay[k];
    return NULL;
}

static void unload(cutune_session *s)
{
    for (size_t i = 0; i < s->n_replay; i++) {
        cutune__replay_device *d = &s->replay[i];
        if (!same_file(s, i)) {
            cutune__t4_free(d->t4);
            free(d->by_config);
        }
        d->t4 = NULL;
        d->by_config = NULL;
    }
}

void cutune__replay_devices_close(cutune_session *s)
{
    unload(s);
    for (size_t i = 0; i < s->n_replay; i++)
        free(s->replay[i].path);
    free(s->replay);
    s->replay = NULL;
    s->n_replay = 0;
}

/* The records of every slot's device placed on the tune's space. */
cutune_status cutune__replay_devices_load(cutune_session *s)
{
    unload(s);
    size_t n = cutune__space_size(s->problem->space);
    for (size_t i = 0; i < s->n_replay; i++) {
        cutune__replay_device *d = &s->replay[i];
        const cutune__replay_device *twin = same_file(s, i);
        if (twin) {
            d->t4 = twin->t4;
            d->by_config = twin->by_config;
            continue;
        }
        char err[1024];
        cutune_status st =
            cutune__t4_load(d->path, s->problem, &d->t4, err, sizeof err);
        if (st)
            return cutune__session_fail(s, st, "replayed device %zu: %s", i,
                                        err);
        /* Once per file: a twin shares the load above and its warning. */
        if (cutune__t4_mismatch(d->t4, d->path, s->problem, err, sizeof err))
            cutune__session_log(s, CUTUNE_LOG_WARN, "replayed device %zu: %s",
                                i, err);
        /* An energy tune of a recording without energy could only fail
         * after its whole search: refused before it. */
        if (cutune__t4_lacks_energy(d->t4, d->path, s->proto.objective, err,
                                    sizeof err))
            return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                        "replayed device %zu: %s", i, err);
        d->by_config = calloc(n ? n : 1, sizeof *d->by_config);
        if (!d->by_config)
            return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY,
                                        "out of memory");
        /* A configuration recorded twice answers with its first record. */
        for (size_t e = 0; e < d->t4->n_entries; e++) {
            const cutune__t4_entry *en = &d->t4->entries[e];
            if (en->config_index < n && !d->by_config[en->config_index])
                d->by_config[en->config_index] = en;
        }
    }
    return CUTUNE_OK;
}

/* Recorded time, scaled, with the session let go of meanwhile. */
static void replay_sleep(cutune_session *s, double seconds)
{
    double t = seconds * s->opt.replay_time_scale;
    if (!(t > 0))
        return;
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
    cutune__session_unlock(s);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
    cutune__session_lock(s);
}

/* The test hook: the slot dies, or hangs until the launch time-out, on
 * the configuration named, once; it is "started again" for its next
 * configuration as a worker would be. Returns 1 when it fired. */
static int fail_hook(cutune_session *s, cutune__mslot *slot, eval_record *e)
{
    if (e->pub.config_index != s->replay_fail.config)
        return 0;
    s->replay_fail.config = CUTUNE__NONE;
    if (s->replay_fail.hang)
        replay_sleep(s, cutune__session_run_timeout(s));
    slot->up = 0;
    e->pub.outcome =
        s->replay_fail.hang ? CUTUNE_OUTCOME_TIMEOUT : CUTUNE_OUTCOME_RUNTIME;
    cutune__session_set_message(
        e, s->replay_fail.hang
               ? "the GPU worker did not answer in time (replayed hang); "
                 "it was killed"
               : "the GPU worker died (replayed)");
    return 1;
}

/* The replayed device's measuring (device.h): there is no binary. */
static void replay_measure(cutune_session *s, cutune__mslot *slot,
                           eval_record *e, cutune__compile_job *job, int final)
{
    (void)job;
    /* A replayed slot's ordinal is its recording's index, and by_config
     * holds one entry per point of the tune's space. */
    assert(slot->ordinal >= 0 && (size_t)slot->ordinal < s->n_replay);
    assert(e->pub.config_index < cutune__space_size(s->problem->space));
    const cutune__replay_device *d = &s->replay[slot->ordinal];
    if (!slot->up && slot->ever_up) {
        cutune__session_log(s, CUTUNE_LOG_INFO,
                            "starting a new GPU worker (replayed)");
        s->tel.restarts++;
    }
    slot->up = slot->ever_up = 1;
    if (!final && fail_hook(s, slot, e))
        return;
    size_t c = e->pub.config_index;
    const cutune__t4_entry *en = d->by_config ? d->by_config[c] : NULL;
    if (!en) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, "not in the recorded results");
        return;
    }
    double run_ms = 0.0;
    for (size_t k = 0; k < en->n_runtimes; k++)
        run_ms += isfinite(en->runtimes[k]) ? en->runtimes[k] : 0.0;
    /* The final round loads binaries compiled already. */
    if (!final)
        e->pub.compile_ms = en->compile_ms;
    replay_sleep(s, ((final ? 0.0 : en->compile_ms) + run_ms) * 1e-3);
    e->pub.outcome = en->outcome;
    if (en->outcome != CUTUNE_OUTCOME_CORRECT) {
        cutune__session_set_message(e, "recorded as failed");
        return;
    }
    cutune__session_set_message(e, "");
    size_t n = en->n_runtimes ? en->n_runtimes : 1;
    e->runtimes = malloc(n * sizeof *e->runtimes);
    if (!e->runtimes) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, "out of memory");
        return;
    }
    if (en->n_runtimes)
        memcpy(e->runtimes, en->runtimes, n * sizeof *e->runtimes);
    else
        e->runtimes[0] = en->time_ms;
    e->runs = n;
    e->gpu_ms = run_ms;
    /* As a GPU would: energy only where the tune asks for it; one
     * recorded reading, no spread. */
    if (s->proto.energy_wanted) {
        e->energy_j = en->energy_j;
        e->power_w = en->power_w;
    }
    /* The tune's GPU time is the simulated GPUs' time, as slept. */
    s->tel.gpu_ms += run_ms * s->opt.replay_time_scale;
    s->tel.span_ms += run_ms * s->opt.replay_time_scale;
    if (cutune__session_summarize(e, n) != 0) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, "out of memory");
    }
}

/* The replayed devices as the device list. */
static cutune_status list_replayed(cutune_session *s)
{
    free(s->props);
    free(s->devices);
    s->n_devices = 0;
    s->props = malloc(s->n_replay * sizeof *s->props);
    s->devices = malloc(s->n_replay * sizeof *s->devices);
    if (!s->props || !s->devices)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < s->n_replay; i++) {
        s->props[i] = s->replay[i].props;
        s->devices[i] = s->props[i].fingerprint;
    }
    s->n_devices = s->n_replay;
    return CUTUNE_OK;
}

/* A replayed device is "brought up" at once. */
static cutune_status bring_up_replayed(cutune_session *s, cutune__mslot *slot,
                                       int keep_reference)
{
    (void)s;
    (void)keep_reference;
    slot->up = slot->ever_up = 1;
    return CUTUNE_OK;
}

/* On replayed devices: the records placed on the space, slot 0 "brought
 * up"; the search starts from the defaults (no occupancy API). */
static cutune_status start_replayed(cutune_session *s, size_t *start)
{
    cutune_status st;
    if ((st = cutune__session_choose_devices(s)) ||
        (st = cutune__replay_devices_load(s)) ||
        (st = cutune__session_bring_up(s, s->slots, 1)))
        return st;
    s->proto.device = s->props[s->slots[0].ordinal];
    /* No measurement log: its records need the whole launch (source,
     * arguments, geometry), which a problem loaded for its space alone
     * does not have. */
    *start = cutune__problem_default_config(s->problem);
    cutune__session_log(s, CUTUNE_LOG_INFO,
                        "%s on %zu replayed device%s (%s): %zu "
                        "configurations",
                        s->problem->name, s->n_slots,
                        s->n_slots == 1 ? "" : "s",
                        s->proto.device.fingerprint.name,
                        cutune__space_size(s->problem->space));
    return CUTUNE_OK;
}

const cutune__device cutune__device_replay = {
    .kind = "replayed",
    .runs_kernels = 0,
    .list = list_replayed,
    .start = start_replayed,
    .bring_up = bring_up_replayed,
    .measure = replay_measure,
};
