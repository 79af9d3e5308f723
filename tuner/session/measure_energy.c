/* A candidate's energy and power: the worker's ENERGY request after its
 * timing (protocol.h says why the worker reads NVML itself), and, before
 * the search, whether this tune measures them at all. The windows'
 * settings are the environment's (docs/measuring.md#energy-and-power):
 * the tune is over in minutes, a setting of the measurement rather than
 * of the search, and the probe (bench/energy_probe) may tell another GPU
 * to want other values. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy.h"
#include "session_internal.h"

/* The counter steps about every 100 ms on A100 and H100 (ML.ENERGY's
 * measurements; bench/energy_probe measures it): a window of 250 ms spans
 * two or three steps, and three of them give a median and a spread for
 * about a second of launches per candidate. The lead covers the GPU's
 * ramp from the previous candidate and the counter's lag behind it. */
#define ENERGY_WINDOW_MS     250.0
#define ENERGY_WINDOWS       3
#define ENERGY_LEAD_S        0.1
#define ENERGY_MIN_LAUNCHES  3
#define ENERGY_WINDOW_MS_MIN 20.0
#define ENERGY_WINDOW_MS_MAX 10000.0
#define ENERGY_WINDOWS_MAX   50

/* Read for every device when the tune starts, before any device is
 * opened, so that a bad value is refused at once, GPU or not. */
cutune_status cutune__session_energy_settings(cutune_session *s)
{
    s->proto.energy.on = 0;
    s->proto.energy.warned = 0;
    if (!s->proto.energy_wanted)
        return CUTUNE_OK;
    char msg[256];
    double window_ms = ENERGY_WINDOW_MS, windows = ENERGY_WINDOWS;
    if (cutune_env_number("CUTUNE_ENERGY_WINDOW_MS", ENERGY_WINDOW_MS_MIN,
                          ENERGY_WINDOW_MS_MAX, 0, &window_ms, msg,
                          sizeof msg) ||
        cutune_env_number("CUTUNE_ENERGY_WINDOWS", 1, ENERGY_WINDOWS_MAX, 1,
                          &windows, msg, sizeof msg))
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT, "%s", msg);
    s->proto.energy.window_s = window_ms * 1e-3;
    s->proto.energy.windows = (uint32_t)windows;
    return CUTUNE_OK;
}

/* Every slot's device is asked in the tuning process, through the slot's
 * NVML monitor, so that a tune that cannot measure energy says so before
 * anything is measured. */
cutune_status cutune__session_check_energy(cutune_session *s)
{
    if (!s->proto.energy_wanted)
        return CUTUNE_OK;
    for (size_t i = 0; i < s->n_slots; i++) {
        cutune__mslot *slot = &s->slots[i];
        const cutune_device *d = &s->props[slot->ordinal].fingerprint;
        char why[256] = "";
        if (!slot->monitor_tried) {
            slot->monitor_tried = 1;
            slot->monitor = cutune__gpu_monitor_open(d->uuid, why, sizeof why);
        }
        if (!slot->monitor && !why[0])
            snprintf(why, sizeof why, "NVML did not open");
        if (slot->monitor &&
            cutune__gpu_monitor_energy(slot->monitor, why, sizeof why) == 0)
            continue;
        if (s->proto.objective != CUTUNE_OBJECTIVE_TIME)
            return cutune__session_fail(
                s, CUTUNE_ERR_UNSUPPORTED,
                "NVML's energy counter is not available on %s (device %d, "
                "%s): %s; tune for time instead",
                d->name, slot->ordinal, d->uuid, why);
        cutune__session_log(s, CUTUNE_LOG_WARN,
                            "NVML's energy counter is not available on %s "
                            "(device %d): %s; energy and power are not "
                            "measured",
                            d->name, slot->ordinal, why);
        return CUTUNE_OK;
    }
    s->proto.energy.on = 1;
    /* The counter is the GPU's: two workers on one GPU each count the
     * other's launches too. */
    for (size_t i = 0; i < s->n_slots; i++)
        for (size_t j = i + 1; j < s->n_slots; j++)
            if (s->slots[i].ordinal == s->slots[j].ordinal) {
                cutune__session_log(s, CUTUNE_LOG_WARN,
                                    "device %d measures with two workers: "
                                    "each candidate's energy includes the "
                                    "launches of the other's",
                                    s->slots[i].ordinal);
                i = j = s->n_slots;
            }
    cutune__session_log(s, CUTUNE_LOG_DEBUG,
                        "energy: %u windows of at least %.0f ms after a "
                        "lead of %.0f ms per candidate",
                        s->proto.energy.windows,
                        1e3 * s->proto.energy.window_s, 1e3 * ENERGY_LEAD_S);
    return CUTUNE_OK;
}

static void fill_request(const cutune_session *s, const eval_record *e,
                         const unsigned grid[3], const unsigned block[3],
                         cutune__energy_request *q)
{
    memset(q, 0, sizeof *q);
    for (int k = 0; k < 3; k++) {
        q->grid[k] = grid[k];
        q->block[k] = block[k];
    }
    q->dynamic_smem = s->problem->shared_memory;
    q->windows = s->proto.energy.windows;
    q->min_launches = ENERGY_MIN_LAUNCHES;
    q->lead_s = ENERGY_LEAD_S;
    q->window_s = s->proto.energy.window_s;
    q->launch_ms = e->pub.time_ms;
    /* Room for a step that comes late in every window; a kernel slower
     * than that still gets its minimum of launches. */
    q->max_seconds = 3.0 * (q->lead_s + q->windows * q->window_s) + 1.0;
}

/* After a candidate's RUN measured it correct: its energy per launch and
 * power into `e`. A window without a figure leaves them NaN and is
 * logged (a warning the first time); a launch that breaks the worker
 * makes the candidate a runtime failure, as in RUN. */
void cutune__session_measure_energy(cutune_session *s, cutune__mslot *slot,
                                    eval_record *e, const unsigned grid[3],
                                    const unsigned block[3])
{
    if (!s->proto.energy.on || e->pub.outcome != CUTUNE_OUTCOME_CORRECT ||
        slot->worker.pid == 0)
        return;
    cutune__energy_request q;
    fill_request(s, e, grid, block, &q);
    double timeout = cutune__session_run_timeout(s) + q.max_seconds +
                     2.0 * q.min_launches * q.launch_ms * 1e-3;
    cutune__energy_reply *r = NULL;
    cutune__call_result cr =
        cutune__session_call(s, slot, CUTUNE__MSG_ENERGY, &q, sizeof q, NULL,
                             0, (void **)&r, sizeof *r, timeout);
    if (cr != CUTUNE__CALL_OK || r->head.cuda_error) {
        e->pub.outcome = cr == CUTUNE__CALL_TIMEOUT ? CUTUNE_OUTCOME_TIMEOUT
                                                    : CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, cr ? slot->worker.message
                                          : r->head.message);
        if (cr == CUTUNE__CALL_OK && r->head.fatal)
            cutune__worker_stop(&slot->worker);
        e->pub.time_ms = NAN;
        free(r);
        return;
    }
    s->tel.span_ms += 1e3 * r->run_s;
    e->energy_j = r->energy_j;
    e->power_w = r->counter_w; /* exact over the windows; power_w, the
                                  reads', is only logged */
    e->energy_rsd = r->energy_rsd;
    char cfg[512];
    cutune__session_describe(s->problem, e->pub.config_index, cfg, sizeof cfg);
    if (r->why != CUTUNE__ENERGY_OK) {
        cutune__session_log(
            s, s->proto.energy.warned++ ? CUTUNE_LOG_DEBUG : CUTUNE_LOG_WARN,
            "no energy figure for %s: %s", cfg, r->head.message);
    } else {
        cutune__session_log(
            s, CUTUNE_LOG_DEBUG,
            "energy of %s: %.4g J per launch (spread %.1f%% over %u "
            "windows, %.0f launches in %.3f s), %.1f W from the counter, "
            "which steps every %.1f ms (%.1f W %s); %.3f s in all",
            cfg, r->energy_j, 100.0 * r->energy_rsd, r->windows, r->launches,
            r->seconds, r->counter_w, 1e3 * r->step_s, r->power_w,
            r->power_instant ? "read instantly" : "read as NVML's average",
            r->run_s);
    }
    free(r);
}
