/* Settling how outputs are checked when the problem gives no reference
 * (cutune_output_check AUTO): from the first configurations measured,
 * whether their outputs depend on tunables by design, and which tunables
 * explain it. Pure logic over counts and configurations; internal to the
 * tuner. */
#ifndef CUTUNE_TUNER_OUTPUT_CHECK_H
#define CUTUNE_TUNER_OUTPUT_CHECK_H

#include <stddef.h>

#include "problem.h"

/* Configurations with a result (same as the default's output, or finite
 * and different) that AUTO waits for before it settles. */
#define CUTUNE__CHECK_SAMPLE 8

/* 1 when outputs vary by design: of at least CUTUNE__CHECK_SAMPLE
 * configurations with a result, at least half (and two) are finite and
 * differ from the default's. */
int cutune__outputs_vary(size_t agreed, size_t differed);

/* Names the tunables that explain which configurations differ: those for
 * which "differs exactly when this tunable is not at the default's value"
 * holds for at least 90% of the n configurations (`differs[i]` for
 * configs[i]). Writes "a, b" into out (empty when none fits) and returns
 * how many it named. */
size_t cutune__explain_differences(const cutune_problem *p, size_t def,
                                   const size_t *configs,
                                   const unsigned char *differs, size_t n,
                                   char *out, size_t outlen);

#endif
