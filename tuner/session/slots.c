/* The measuring slots of a session: one per device of the tune (the
 * `devices` option, else `device` alone), the lock the measuring threads
 * share, and which devices make up one model. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

void cutune__session_lock(cutune_session *s)
{
    if (s->parallel)
        pthread_mutex_lock(&s->lock);
}

void cutune__session_unlock(cutune_session *s)
{
    if (s->parallel)
        pthread_mutex_unlock(&s->lock);
}

/* One slot per device the options name; the options' array is borrowed
 * only until the session is created, so the ordinals are kept here. */
cutune_status cutune__session_init_slots(cutune_session *s)
{
    size_t n = s->opt.n_devices && s->opt.devices ? s->opt.n_devices : 1;
    s->slots = calloc(n, sizeof *s->slots);
    if (!s->slots)
        return CUTUNE_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++) {
        cutune__mslot *slot = &s->slots[i];
        slot->ordinal = s->opt.n_devices && s->opt.devices ? s->opt.devices[i]
                                                           : s->opt.device;
        slot->worker.pid = 0;
        slot->worker.fd = -1;
        slot->index = i;
    }
    s->n_slots = n;
    s->opt.device = s->slots[0].ordinal;
    s->opt.devices = NULL;
    s->opt.n_devices = n;
    return CUTUNE_OK;
}

void cutune__session_stop_slots(cutune_session *s)
{
    for (size_t i = 0; i < s->n_slots; i++) {
        cutune__worker_stop(&s->slots[i].worker);
        s->slots[i].up = 0;
    }
}

void cutune__session_free_slots(cutune_session *s)
{
    for (size_t i = 0; s->slots && i < s->n_slots; i++) {
        cutune__worker_stop(&s->slots[i].worker);
        cutune__gpu_monitor_close(s->slots[i].monitor);
    }
    free(s->slots);
    s->slots = NULL;
    s->n_slots = 0;
}

static int same_model(const cutune_device *a, const cutune_device *b)
{
    return strcmp(a->name, b->name) == 0 && a->cc_major == b->cc_major &&
           a->cc_minor == b->cc_minor;
}

static cutune_status check_ordinal(cutune_session *s, int ordinal)
{
    if (ordinal < 0 || (size_t)ordinal >= s->n_devices)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "device %d does not exist "
                                    "(%zu %s device%s found)",
                                    ordinal, s->n_devices, s->dev->kind,
                                    s->n_devices == 1 ? "" : "s");
    return CUTUNE_OK;
}

/* After the devices are listed: every slot's device exists, and all are
 * of one model, since they share one search and one cache record. */
cutune_status cutune__session_check_slots(cutune_session *s)
{
    cutune_status st;
    for (size_t i = 0; i < s->n_slots; i++)
        if ((st = check_ordinal(s, s->slots[i].ordinal)))
            return st;
    const cutune_device *first = &s->props[s->slots[0].ordinal].fingerprint;
    for (size_t i = 1; i < s->n_slots; i++) {
        const cutune_device *d = &s->props[s->slots[i].ordinal].fingerprint;
        if (!same_model(first, d))
            return cutune__session_fail(
                s, CUTUNE_ERR_INVALID_ARGUMENT,
                "devices %d (%s) and %d (%s) are different models: they "
                "cannot share one search (tune each model in a session of "
                "its own; cutune_session_device_groups splits them)",
                s->slots[0].ordinal, first->name, s->slots[i].ordinal,
                d->name);
    }
    return CUTUNE_OK;
}

cutune_status cutune_session_device_groups(cutune_session *s,
                                           const int *ordinals, size_t n,
                                           size_t *group, size_t *n_groups)
{
    if (!s || (!ordinals && n) || (!group && n) || !n_groups)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *n_groups = 0;
    cutune_status st = cutune__session_list_devices(s);
    cutune__session_stop_slots(s);
    if (st)
        return st;
    for (size_t i = 0; i < n; i++)
        if ((st = check_ordinal(s, ordinals[i])))
            return st;
    for (size_t i = 0; i < n; i++) {
        const cutune_device *d = &s->props[ordinals[i]].fingerprint;
        group[i] = *n_groups;
        for (size_t k = 0; k < i; k++)
            if (same_model(&s->props[ordinals[k]].fingerprint, d)) {
                group[i] = group[k];
                break;
            }
        if (group[i] == *n_groups)
            (*n_groups)++;
    }
    return CUTUNE_OK;
}
