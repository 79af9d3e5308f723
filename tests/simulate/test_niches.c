/* The default strategy on a recorded space whose optimum sits in another
 * niche (setting of the switches) than most fast configurations: the
 * hub's convolution kernel on an A100, where the optimum has read-only
 * loads and shared memory on, a single configuration 7% ahead of the
 * next, and the first fast configurations a run meets are mostly in the
 * niche with read-only loads off. Best-first alone stays there; sharing
 * the expansions among niches (docs/strategies.md, "Niches share the
 * expansions") reaches the optimum. The figures are
 * bench/results/strategies.md's, on seeds no setting was chosen on.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "cutune/simulate.h"

int main(void)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    char t1[1024], t4[1024];
    snprintf(t1, sizeof t1, "%s/t1/convolution_milo.json", data ? data : "");
    snprintf(t4, sizeof t4, "%s/t4/convolution_milo_A100_T4.json.gz",
             data ? data : "");
    /* The data is part of the tree: missing is a failure. */
    CHECK(data && access(t1, R_OK) == 0 && access(t4, R_OK) == 0);
    if (!data || access(t1, R_OK) != 0 || access(t4, R_OK) != 0) {
        fprintf(stderr, "missing test data: %s or %s\n", t1, t4);
        return check_finish();
    }
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.space_only = 1;
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load(t1, &po, &p), CUTUNE_OK);
    cutune_simulate_options o;
    cutune_simulate_options_init(&o);
    o.results_path = t4;
    o.strategy = "default";
    o.max_evals = 200;
    o.seed = 1000;
    o.repeat = 100;
    cutune_simulation *sim = NULL;
    CHECK_INT(cutune_simulate(p, &o, &sim), CUTUNE_OK);
    const cutune_simulate_result *r = cutune_simulation_result(sim);
    CHECK(r != NULL);
    if (r) {
        size_t within = r->runs_within[2]; /* 5% */
        printf("A100 convolution, 200 evaluations, seeds 1000-1099: %zu "
               "of %zu runs within 5%% of the optimum (median %.3f)\n",
               within, r->n_runs, r->ratio.median);
        CHECK_INT(r->n_runs, 100);
        /* 93 measured; best-first alone, 62 (niche_ucb=0) */
        CHECK(within >= 80);
        CHECK(r->ratio.median >= 0.98);
    }
    cutune_simulation_destroy(sim);
    cutune_problem_destroy(p);
    return check_finish();
}
