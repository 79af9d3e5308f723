/* Settling AUTO output checks (output_check.c): when outputs count as
 * varying by design, and which tunables explain the differences. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "output_check.h"
#include "problem.h"

static void vary_rule(void)
{
    /* Too few results say nothing, however they split. */
    CHECK(!cutune__outputs_vary(2, 2));
    CHECK(!cutune__outputs_vary(0, 7));
    /* A sample: half or more differing is "most" of a biased sample. */
    CHECK(cutune__outputs_vary(4, 4));
    CHECK(cutune__outputs_vary(1, 7));
    CHECK(!cutune__outputs_vary(6, 2));
    CHECK(!cutune__outputs_vary(8, 0));
}

/* A space of steps x block: the configurations that differ are exactly
 * those whose steps is not the default's. */
static void explain(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path,
             "%s/tests/compat/output_depends/"
             "output_depends.json",
             dir);
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    size_t steps = cutune__problem_find_param(p, "steps");
    CHECK(steps != SIZE_MAX);
    if (steps == SIZE_MAX) {
        cutune_problem_destroy(p);
        return;
    }
    size_t def = cutune__problem_default_config(p);
    const uint32_t *d = cutune__space_config(p->space, def);
    size_t n = cutune__space_size(p->space);
    size_t *configs = malloc(n * sizeof *configs);
    unsigned char *differs = malloc(n);
    for (size_t c = 0; c < n; c++) {
        configs[c] = c;
        differs[c] = cutune__space_config(p->space, c)[steps] != d[steps];
    }
    char names[256];
    CHECK_INT(cutune__explain_differences(p, def, configs, differs, n, names,
                                          sizeof names),
              1);
    CHECK_STR(names, "steps");
    /* Differences that no single tunable explains name none. */
    for (size_t c = 0; c < n; c++)
        differs[c] = (unsigned char)(c % 2);
    size_t named = cutune__explain_differences(p, def, configs, differs, n,
                                               names, sizeof names);
    CHECK(named == 0 || strstr(names, "steps") == NULL);
    free(configs);
    free(differs);
    cutune_problem_destroy(p);
}

int main(void)
{
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    vary_rule();
    explain(src ? src : ".");
    return check_finish();
}
