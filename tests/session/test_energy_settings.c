/* The energy windows' settings (CUTUNE_ENERGY_WINDOW_MS,
 * CUTUNE_ENERGY_WINDOWS) are read as a tune starts, before any device is
 * opened: a bad value fails the tune with one message naming the variable
 * and its value, GPU or not; a tune that measures no energy does not read
 * them; good values let it run (on a replayed device, which measures no
 * energy: the figures stay NaN). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cutune/cutune.h"
#include "tmpdir.h"

static char t4[4096], cache_dir[64];

static cutune_status tune(const cutune_problem *p, int measure_energy,
                          const char *replay, char *msg, size_t len,
                          const cutune_tune_result **r)
{
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "random";
    o.max_evals = 5;
    o.cache_dir = cache_dir;
    o.write_cache = 0;
    o.replay_devices = replay;
    o.measure_energy = measure_energy;
    cutune_session *s;
    cutune_status st = cutune_session_create(&o, &s);
    CHECK_INT(st, CUTUNE_OK);
    if (st == CUTUNE_OK)
        st = cutune_session_tune(s, p, r);
    snprintf(msg, len, "%s", cutune_session_errmsg(s));
    if (st == CUTUNE_OK) {
        for (size_t i = 0; i < (*r)->n_evals; i++)
            CHECK(isnan((*r)->evals[i].energy_j) &&
                  isnan((*r)->evals[i].power_w) &&
                  isnan((*r)->evals[i].energy_rsd));
        CHECK((*r)->n_evals > 0);
    }
    cutune_session_destroy(s);
    return st;
}

int main(void)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    CHECK(data != NULL);
    if (!data)
        return check_finish();
    char t1[4096], msg[1024];
    snprintf(t1, sizeof t1, "%s/t1/convolution_milo.json", data);
    snprintf(t4, sizeof t4, "%s/t4/convolution_milo_A100_T4.json.gz", data);
    snprintf(cache_dir, sizeof cache_dir, "/tmp/cutune-energy-XXXXXX");
    CHECK(mkdtemp(cache_dir) != NULL);
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.space_only = 1;
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(t1, &po, &p), CUTUNE_OK);
    const cutune_tune_result *r;

    setenv("CUTUNE_ENERGY_WINDOW_MS", "abc", 1);
    /* On a GPU (whether there is one or not: the settings come first)
     * and on a replayed device alike. */
    cutune_problem *whole;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &whole), CUTUNE_OK);
    CHECK_INT(tune(whole, 1, NULL, msg, sizeof msg, &r),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_STR(msg, "CUTUNE_ENERGY_WINDOW_MS: 'abc' is not a number from 20 "
                   "to 10000");
    cutune_problem_destroy(whole);
    CHECK_INT(tune(p, 1, t4, msg, sizeof msg, &r),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_STR(msg, "CUTUNE_ENERGY_WINDOW_MS: 'abc' is not a number from 20 "
                   "to 10000");
    setenv("CUTUNE_ENERGY_WINDOW_MS", "5", 1);
    CHECK_INT(tune(p, 1, t4, msg, sizeof msg, &r),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_STR(msg, "CUTUNE_ENERGY_WINDOW_MS: '5' is not a number from 20 to "
                   "10000");
    /* Not read when no energy is measured. */
    CHECK_INT(tune(p, 0, t4, msg, sizeof msg, &r), CUTUNE_OK);

    setenv("CUTUNE_ENERGY_WINDOW_MS", "100", 1);
    setenv("CUTUNE_ENERGY_WINDOWS", "2.5", 1);
    CHECK_INT(tune(p, 1, t4, msg, sizeof msg, &r),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_STR(msg, "CUTUNE_ENERGY_WINDOWS: '2.5' is not a whole number from 1 "
                   "to 50");
    setenv("CUTUNE_ENERGY_WINDOWS", "5", 1);
    CHECK_INT(tune(p, 1, t4, msg, sizeof msg, &r), CUTUNE_OK);

    cutune_problem_destroy(p);
    remove_tree(cache_dir);
    return check_finish();
}
