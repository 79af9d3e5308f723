/* Fuzz target for the T4 reader: any bytes (plain or gzip) as recorded
 * results of a small fixed problem (the space of tests/cli/fixtures/
 * sim.json), with a 1 MiB limit on the decompressed size so that each
 * input stays fast; what loads is checked for the promises of t4.h:
 * every time of a correct entry positive and finite, every index inside
 * the space or SIZE_MAX. A broken promise aborts with the input kept. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cutune/cutune.h"
#include "fuzz_input.h"
#include "problem.h"
#include "t4.h"

static const char problem_json[] =
    "{\"General\": {\"BenchmarkName\": \"sim\"},\n"
    " \"ConfigurationSpace\": {\"TuningParameters\": [\n"
    "  {\"Name\": \"block_size_x\", \"Type\": \"int\", "
    "\"Values\": \"[32, 64, 96, 128, 256]\"},\n"
    "  {\"Name\": \"UNROLL\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, "
    "8]\"},\n"
    "  {\"Name\": \"mode\", \"Type\": \"string\", \"Values\": [\"ca\", "
    "\"cg\"]}],\n"
    "  \"Conditions\": [{\"Expression\": \"block_size_x * UNROLL <= "
    "1024\"}]},\n"
    " \"KernelSpecification\": {\"KernelName\": \"k\", "
    "\"ProblemSize\": [4096]}}\n";

static cutune_problem *the_problem(void)
{
    static cutune_problem *p;
    if (!p) {
        const char *path =
            cutune_fuzz_write("problem.json", (const uint8_t *)problem_json,
                              sizeof problem_json - 1);
        cutune_problem_options po = {
            .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
        if (!path || cutune_problem_load(path, &po, &p) != CUTUNE_OK)
            abort(); /* the fixed problem must load */
        setenv("CUTUNE_MAX_INPUT_MB", "1", 1);
    }
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cutune_fuzz_set_message("");
    cutune_problem *p = the_problem();
    const char *path = cutune_fuzz_write("results.json", data, size);
    if (!path)
        return 0;
    cutune__t4 *t4 = NULL;
    char err[1024] = "";
    if (cutune__t4_load(path, p, &t4, err, sizeof err) != CUTUNE_OK) {
        if (!err[0] || t4)
            abort(); /* a refusal names its reason and returns nothing */
        cutune_fuzz_set_message(err);
        return 0;
    }
    size_t space = cutune_problem_space_size(p);
    for (size_t i = 0; i < t4->n_entries; i++) {
        const cutune__t4_entry *e = &t4->entries[i];
        if (e->config_index != SIZE_MAX && e->config_index >= space)
            abort();
        if (e->outcome == CUTUNE_OUTCOME_CORRECT && !isinf(e->time_ms) &&
            !(e->time_ms > 0 && isfinite(e->time_ms)))
            abort();
        for (size_t k = 0; k < e->n_runtimes; k++)
            if (!(e->runtimes[k] > 0) || !isfinite(e->runtimes[k]))
                abort();
        if (!(e->compile_ms >= 0) || !isfinite(e->compile_ms))
            abort();
    }
    cutune__t4_free(t4);
    return 0;
}
