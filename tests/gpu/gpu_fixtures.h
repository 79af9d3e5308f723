/* Test helpers of the GPU tests: a parameter's value in a configuration
 * the public API returns, the fixtures of tests/gpu/fixtures, and the
 * outcome each configuration of the faulty fixture must get. */
#ifndef CUTUNE_TESTS_GPU_FIXTURES_H
#define CUTUNE_TESTS_GPU_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutune/cutune.h"

/* The value of the parameter `name` (a tune's best or baseline), or
 * NULL. */
static inline const char *value_of(const cutune_param_value *v, size_t n,
                                   const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return v[i].value;
    return NULL;
}

/* Loads tests/gpu/fixtures/FILE (the tree from CUTUNE_SOURCE_DIR). */
static inline cutune_status load_fixture(const char *file, cutune_problem **p)
{
    char path[4096];
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/gpu/fixtures/%s", src ? src : ".",
             file);
    return cutune_problem_load(path, NULL, p);
}

/* faulty.json: configurations are numbered with FAULT varying fastest,
 * and FAULT=f gets faulty_expected[f]. */
static const cutune_outcome faulty_expected[6] = {
    CUTUNE_OUTCOME_CORRECT, CUTUNE_OUTCOME_RUNTIME, CUTUNE_OUTCOME_CORRECTNESS,
    CUTUNE_OUTCOME_TIMEOUT, CUTUNE_OUTCOME_COMPILE, CUTUNE_OUTCOME_RESOURCES};

#endif
