/* GPU test of energy and power (docs/measuring.md#energy-and-power): a
 * tune of vector_add with measure_energy gives every correct candidate a
 * positive energy per launch, a plausible power and a finite spread of
 * its windows, consistent with its time; and the GPU's power limits and
 * application clocks read the same after the tune as before (cutune only
 * reads NVML). Skips, saying why, without a GPU or without NVML's energy
 * counter (a GPU before Volta, a MIG instance). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cutune/cutune.h"
#include "nvml_lib.h"
#include "tmpdir.h"

static char cache_dir[] = "/tmp/cutune-energy-test-XXXXXX";

/* What the owner of the GPU set, as NVML reads it; a status per reading
 * so that one NVML cannot read is compared as such. */
typedef struct gpu_settings {
    int st[5];
    unsigned v[5];
} gpu_settings;

static void read_settings(cutune__nvml *n, gpu_settings *g)
{
    memset(g, 0, sizeof *g);
    g->st[0] = cutune__nvml_power_limit_mw(n, &g->v[0]);
    g->st[1] = cutune__nvml_enforced_limit_mw(n, &g->v[1]);
    g->st[2] = cutune__nvml_app_clock_mhz(n, CUTUNE__NVML_CLOCK_SM, &g->v[2]);
    g->st[3] = cutune__nvml_app_clock_mhz(n, CUTUNE__NVML_CLOCK_MEM, &g->v[3]);
    unsigned long long mj;
    g->st[4] = cutune__nvml_energy_mj(n, &mj);
}

static void log_to_stderr(void *user, cutune_log_level level, const char *msg)
{
    (void)user;
    if (level <= CUTUNE_LOG_WARN)
        fprintf(stderr, "cutune: %s\n", msg);
}

/* 0: tested; 1: no GPU; 2: no energy counter (*why says so). */
static int tune_with_energy(char *why, size_t whylen)
{
    long long size = 1 << 24; /* 192 MB: beyond any L2, flushed or not */
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "random";
    o.max_evals = 6;
    o.cache_dir = cache_dir;
    o.write_cache = 0;
    o.measure_energy = 1;
    o.log = log_to_stderr;
    cutune_session *s;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    const cutune_device *devs;
    size_t n_devs;
    int rc = 0;
    if (cutune_session_devices(s, &devs, &n_devs) != CUTUNE_OK ||
        n_devs == 0) {
        rc = 1;
        goto out;
    }
    cutune__nvml *n = cutune__nvml_open(devs[0].uuid, why, whylen);
    if (!n) {
        rc = 2;
        goto out;
    }
    gpu_settings before, after;
    read_settings(n, &before);
    if (before.st[4] != CUTUNE__NVML_OK) {
        snprintf(why, whylen, "nvmlDeviceGetTotalEnergyConsumption: %s",
                 cutune__nvml_error(n, before.st[4]));
        cutune__nvml_close(n);
        rc = 2;
        goto out;
    }
    const cutune_tune_result *r;
    cutune_status st = cutune_session_tune(s, p, &r);
    CHECK_INT(st, CUTUNE_OK);
    if (st)
        fprintf(stderr, "%s\n", cutune_session_errmsg(s));
    size_t measured = 0;
    for (size_t i = 0; st == CUTUNE_OK && i < r->n_evals; i++) {
        const cutune_eval *e = &r->evals[i];
        if (e->outcome != CUTUNE_OUTCOME_CORRECT)
            continue;
        measured++;
        CHECK(e->energy_j > 0);
        CHECK(e->power_w >= 10 && e->power_w <= 2000);
        CHECK(isfinite(e->energy_rsd) && e->energy_rsd >= 0);
        /* Joules per launch over seconds per launch is a power: the
         * timed launches had the L2 flushed before each, the energy
         * windows run back to back, so only the order of magnitude must
         * agree (a unit slip would be a factor of 1000). */
        double implied_w = e->energy_j / (e->time_ms * 1e-3);
        CHECK(implied_w > 0.2 * e->power_w && implied_w < 5 * e->power_w);
        printf("config %zu: %.3f ms, %.4g J per launch (spread %.1f%%), "
               "%.1f W\n",
               e->config_index, e->time_ms, e->energy_j, 100 * e->energy_rsd,
               e->power_w);
    }
    CHECK(measured > 0);
    read_settings(n, &after);
    for (int k = 0; k < 4; k++) {
        CHECK_INT(after.st[k], before.st[k]);
        CHECK_INT(after.v[k], before.v[k]);
    }
    cutune__nvml_close(n);
out:
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return rc;
}

/* Without energy the tune is the same as ever: energy stays NaN. */
static void tune_without_energy(void)
{
    long long size = 1 << 20;
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "random";
    o.max_evals = 3;
    o.cache_dir = cache_dir;
    o.write_cache = 0;
    cutune_session *s;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    const cutune_tune_result *r;
    CHECK_INT(cutune_session_tune(s, p, &r), CUTUNE_OK);
    for (size_t i = 0; r && i < r->n_evals; i++)
        CHECK(isnan(r->evals[i].energy_j) && isnan(r->evals[i].power_w) &&
              isnan(r->evals[i].energy_rsd));
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

int main(void)
{
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    char why[256] = "";
    int rc = tune_with_energy(why, sizeof why);
    if (rc == 0)
        tune_without_energy();
    remove_tree(cache_dir);
    if (rc == 1)
        return check_skip("no CUDA device");
    if (rc == 2) {
        char msg[320];
        snprintf(msg, sizeof msg, "NVML's energy counter is not available: %s",
                 why);
        return check_skip(msg);
    }
    return check_finish();
}
