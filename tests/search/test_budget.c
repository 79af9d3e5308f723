/* The one budget rule (search/strategy/budget.h): the caller's limits replace
 * the T1 file's as a whole, a fraction becomes evaluations (the smaller of two
 * wins), and with no limit at all a strategy gets CUTUNE__DEFAULT_BUDGET
 * evaluations unless it is exhaustive. */
#include <stddef.h>

#include "../check.h"
#include "strategy/budget.h"

static void test_precedence(void)
{
    const cutune__strategy_type *dflt = cutune__strategy_default;
    cutune__budget caller = {7, 0, 0};
    cutune__budget t1 = {20, 5.0, 0.5};
    /* The caller's wins, and the T1's time limit goes with the rest. */
    cutune__budget b = cutune__budget_resolve(&caller, &t1, 1000, dflt);
    CHECK_INT(b.max_evals, 7);
    CHECK(b.max_seconds == 0);
    /* No caller limit: the T1's, its fraction (500) above its count. */
    cutune__budget none = {0, 0, 0};
    b = cutune__budget_resolve(&none, &t1, 1000, dflt);
    CHECK_INT(b.max_evals, 20);
    CHECK(b.max_seconds == 5.0);
    b = cutune__budget_resolve(NULL, &t1, 30, dflt);
    CHECK_INT(b.max_evals, 15);
    /* Neither: the strategy's default. */
    b = cutune__budget_resolve(NULL, NULL, 1000, dflt);
    CHECK_INT(b.max_evals, CUTUNE__DEFAULT_BUDGET);
    CHECK(!cutune__budget_given(&none));
    CHECK(!cutune__budget_given(NULL));
    CHECK(cutune__budget_given(&t1));
}

static void test_fraction_and_defaults(void)
{
    const cutune__strategy_type *dflt = cutune__strategy_default;
    const cutune__strategy_type *all = cutune__strategy_brute_force;
    /* ceil, at least one. */
    cutune__budget f = {0, 0, 0.1};
    CHECK_INT(cutune__budget_resolve(&f, NULL, 95, dflt).max_evals, 10);
    f.fraction = 1e-9;
    CHECK_INT(cutune__budget_resolve(&f, NULL, 95, dflt).max_evals, 1);
    /* A fraction outside (0, 1] is not a limit. */
    f.fraction = 2.0;
    CHECK_INT(cutune__budget_resolve(&f, NULL, 95, dflt).max_evals,
              CUTUNE__DEFAULT_BUDGET);
    /* A time limit alone: no evaluation limit is added. */
    cutune__budget t = {0, 3.0, 0};
    cutune__budget b = cutune__budget_resolve(&t, NULL, 95, dflt);
    CHECK_INT(b.max_evals, 0);
    CHECK(b.max_seconds == 3.0);
    /* An exhaustive strategy (by its flag, not its name) sees the whole
     * space when nothing limits it, and honours limits like any other. */
    CHECK(all->exhaustive);
    CHECK(!dflt->exhaustive);
    CHECK_INT(cutune__budget_resolve(NULL, NULL, 95, all).max_evals, 0);
    cutune__budget e = {12, 0, 0};
    CHECK_INT(cutune__budget_resolve(&e, NULL, 95, all).max_evals, 12);
    for (size_t i = 0; cutune__strategies[i]; i++)
        CHECK_INT(cutune__budget_resolve(NULL, NULL, 95, cutune__strategies[i])
                      .max_evals,
                  cutune__strategies[i]->exhaustive ? 0
                                                    : CUTUNE__DEFAULT_BUDGET);
}

int main(void)
{
    test_precedence();
    test_fraction_and_defaults();
    return check_finish();
}
