/* What choosing configurations costs a strategy on a large space: every
 * strategy on a synthetic space of 100,000 configurations (five
 * parameters of ten values, a smooth bowl of runtimes with a ripple), at
 * 100, 200 and 400 evaluations over a few seeds, as CPU milliseconds per
 * run and per proposal. No GPU, no recorded file: the bound on the cost of
 * a proposal (issue 18: the Bayesian strategy on a 100,000-configuration
 * space) is a property of the strategy, not of a kernel. With --switches
 * the 100,000 configurations are five parameters of five values and five
 * two-valued switches (32 niches, which the default shares its
 * expansions among: search/strategy/default.c).
 *
 * usage: bench-proposal-cost [--seeds N] [--strategies NAME,...]
 *            [--switches]
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "name_list.h"
#include "replay/replay.h"
#include "strategy/strategy.h"

#define N_BOWL     5  /* a..e: the runtimes' bowl */
#define N_PARAMS   10 /* with the switches s1..s5 */
#define N_VALUES   10
#define N_SWITCHED 5 /* values of a..e with --switches */

static cutune__value values[N_VALUES];

/* a..e of ten values, or of five and switches s1..s5. */
static cutune__space *make_space(int switches)
{
    for (int i = 0; i < N_VALUES; i++)
        values[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = i};
    size_t nv = switches ? N_SWITCHED : N_VALUES;
    cutune__param params[N_PARAMS] = {{"a", values, nv}, {"b", values, nv},
                                      {"c", values, nv}, {"d", values, nv},
                                      {"e", values, nv}, {"s1", values, 2},
                                      {"s2", values, 2}, {"s3", values, 2},
                                      {"s4", values, 2}, {"s5", values, 2}};
    return cutune__space_create(params, switches ? N_PARAMS : N_BOWL, NULL, 0,
                                NULL, 0, NULL);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int wanted(const char *list, const char *name)
{
    return !list || bench_listed(list, name);
}

int main(int argc, char **argv)
{
    static const size_t budgets[] = {100, 200, 400};
    size_t seeds = 3;
    const char *only = NULL;
    int switches = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--strategies") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--switches") == 0)
            switches = 1;
        else {
            fputs("usage: bench-proposal-cost [--seeds N] "
                  "[--strategies NAME,...] [--switches]\n",
                  stderr);
            return 1;
        }
    }
    gsl_set_error_handler_off();
    cutune__space *s = make_space(switches);
    size_t n = s ? cutune__space_size(s) : 0;
    double *t = malloc((n ? n : 1) * sizeof *t);
    if (!s || !t || seeds == 0) {
        fputs("bench-proposal-cost: out of memory\n", stderr);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        const uint32_t *c = cutune__space_config(s, i);
        double d2 = 0;
        for (size_t p = 0; p < N_BOWL; p++)
            d2 += ((double)c[p] - 3.0) * ((double)c[p] - 3.0);
        t[i] = 1.0 + 0.02 * d2 + 0.05 * sin((double)i);
        /* Each switch a different code: some faster on, some slower. */
        if (switches)
            t[i] *= 1.0 + 0.1 * (c[5] + c[7] + c[9]) - 0.15 * (c[6] + c[8]);
    }
    printf("# CPU time of choosing configurations, %zu configurations, "
           "%zu seeds\n\n| strategy | evaluations | ms per run | ms per "
           "proposal |\n|---|---:|---:|---:|\n",
           n, seeds);
    for (size_t k = 0; cutune__strategies[k]; k++) {
        const cutune__strategy_type *type = cutune__strategies[k];
        if (type->exhaustive || !wanted(only, type->name))
            continue;
        for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
            double t0 = cpu_now();
            for (size_t seed = 1; seed <= seeds; seed++) {
                cutune__replay_options o = {.max_evals = budgets[b],
                                            .max_seconds = 0,
                                            .batch = 1,
                                            .seed = seed,
                                            .start = SIZE_MAX,
                                            .params = NULL,
                                            .try_cost = NULL};
                if (cutune__replay_run(type, s, t, NULL, &o, NULL, NULL, 0) !=
                    0) {
                    fputs("bench-proposal-cost: out of memory\n", stderr);
                    return 2;
                }
            }
            double ms = 1e3 * (cpu_now() - t0) / (double)seeds;
            printf("| %s | %zu | %.1f | %.3f |\n", type->name, budgets[b], ms,
                   ms / (double)budgets[b]);
        }
    }
    free(t);
    cutune__space_free(s);
    return 0;
}
