/* --devices for cutune tune and tune --plan, and the replayed devices the
 * environment may ask for (CUTUNE_DEVICE_BACKEND, docs/devices.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_devices(const char *text, cli_devices *out)
{
    memset(out, 0, sizeof *out);
    if (strcmp(text, "all") == 0) {
        out->all = 1;
        return 0;
    }
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        char *end = NULL;
        errno = 0;
        long v = len && p[0] >= '0' && p[0] <= '9' ? strtol(p, &end, 10) : -1;
        if (v < 0 || end != p + len || errno || v > CLI_MAX_ORDINAL)
            return cli_usage_error("--devices: '%.*s' in '%s' is not a "
                                   "device ordinal (give all or "
                                   "N[,N...], N from 0 to %d)",
                                   (int)len, p, text, CLI_MAX_ORDINAL);
        if (out->n == CLI_MAX_DEVICES)
            return cli_usage_error("--devices: more than %d devices in '%s'",
                                   CLI_MAX_DEVICES, text);
        out->v[out->n++] = (int)v;
        if (p[len] != ',')
            break;
        p += len + 1;
    }
    return 0;
}

int cli_replay_env(cutune_session_options *o)
{
    const char *backend = getenv("CUTUNE_DEVICE_BACKEND");
    if (!backend || !backend[0] || strcmp(backend, "gpu") == 0)
        return 0;
    if (strncmp(backend, "replay:", 7) != 0 || !backend[7]) {
        fprintf(stderr,
                "cutune: CUTUNE_DEVICE_BACKEND: '%s' is not gpu or "
                "replay:FILE[,FILE...]\n",
                backend);
        return CLI_EXIT_USAGE;
    }
    o->replay_devices = backend + 7;
    /* Above a thousand times real time, a replayed tune would sleep for
     * days: a typo, not a test. */
    char why[256];
    if (cutune_env_number("CUTUNE_REPLAY_TIME_SCALE", 0, 1000, 0,
                          &o->replay_time_scale, why, sizeof why)) {
        fprintf(stderr, "cutune: %s\n", why);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cli_device_groups(const cutune_session_options *o, const cli_devices *d,
                      cli_device_groups_t *g)
{
    memset(g, 0, sizeof *g);
    cutune_session_options probe = *o;
    probe.devices = NULL;
    probe.n_devices = 0;
    probe.log = NULL;
    cutune_session *s = NULL;
    cutune_status st = cutune_session_create(&probe, &s);
    const cutune_device *list = NULL;
    size_t n = d->n;
    if (st == CUTUNE_OK && d->all) {
        st = cutune_session_devices(s, &list, &n);
        if (n > CLI_MAX_DEVICES)
            n = CLI_MAX_DEVICES;
        for (size_t i = 0; st == CUTUNE_OK && i < n; i++)
            g->ordinal[i] = (int)i;
    } else {
        memcpy(g->ordinal, d->v, n * sizeof *g->ordinal);
    }
    g->n = n;
    if (st == CUTUNE_OK)
        st = cutune_session_device_groups(s, g->ordinal, n, g->group,
                                          &g->n_groups);
    if (st != CUTUNE_OK) {
        cli_print_error(cutune_session_errmsg(s), st);
        cutune_session_destroy(s);
        return cli_exit_code(st);
    }
    cutune_session_destroy(s);
    return 0;
}

size_t cli_group_members(const cli_device_groups_t *g, size_t group, int *out)
{
    size_t m = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->group[i] == group)
            out[m++] = g->ordinal[i];
    return m;
}
