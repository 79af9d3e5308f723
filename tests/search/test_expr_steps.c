/* A budget of steps shared by many evaluations of one expression (issue
 * 35): the space gives each condition one, so a condition with long loops
 * checked once per configuration stops with a message naming its cost
 * instead of running for hours. */
#include <string.h>

#include "../check.h"
#include "expr/expr.h"

static int eval(const cutune__expr *e, long long a, size_t *steps,
                cutune__expr_error *err)
{
    cutune__value var = {.type = CUTUNE__V_INT, .u.i = a};
    cutune__value out;
    int rc = cutune__expr_eval_steps(e, &var, &out, err, steps);
    if (rc == 0)
        cutune__value_clear(&out);
    return rc;
}

int main(void)
{
    cutune__expr_error err;
    memset(&err, 0, sizeof err);
    cutune__expr *e = cutune__expr_parse(
        "len([x for x in range(600) if x < a]) > 0", 0, &err);
    CHECK(e != NULL);
    if (!e)
        return check_finish();
    /* 600 values made and 600 iterations each time. */
    size_t steps = 2000;
    CHECK_INT(eval(e, 5, &steps, &err), 0);
    CHECK_INT(steps, 800);
    CHECK_INT(eval(e, 6, &steps, &err), -1);
    CHECK_CONTAINS(err.message, "steps");
    CHECK_CONTAINS(err.message, "once per configuration");
    /* Without a shared budget, only the evaluation's own limit holds. */
    CHECK_INT(eval(e, 7, NULL, &err), 0);
    cutune__expr_free(e);
    return check_finish();
}
