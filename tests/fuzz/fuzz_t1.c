/* Fuzz target for the T1 reader: any bytes as a problem file, loaded for
 * its space (the kernel part is not read, so KernelFile cannot point the
 * fuzzer at /dev/zero), and what loads is walked: names, values, the
 * configuration text of the first and last valid points. */
#include <stdint.h>
#include <stdlib.h>

#include "cutune/cutune.h"
#include "fuzz_input.h"
#include "problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cutune_fuzz_set_message("");
    const char *path = cutune_fuzz_write("problem.json", data, size);
    if (!path)
        return 0;
    cutune_problem_options po = {
        .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
    cutune_problem *p = NULL;
    if (cutune_problem_load(path, &po, &p) != CUTUNE_OK) {
        cutune_fuzz_set_message(cutune_problem_errmsg(p));
        cutune_problem_destroy(p);
        return 0;
    }
    (void)cutune_problem_name(p);
    (void)cutune_problem_source_hash(p);
    size_t n = cutune_problem_param_count(p);
    for (size_t i = 0; i < n; i++) {
        (void)cutune_problem_param_name(p, i);
        for (size_t v = 0; v < cutune_problem_value_count(p, i); v++)
            (void)cutune_problem_value(p, i, v);
    }
    size_t valid = cutune_problem_space_size(p);
    cutune_param_value *cfg = calloc(n ? n : 1, sizeof *cfg);
    if (cfg && valid > 0) {
        cutune__problem_config_values(p, 0, cfg);
        cutune__problem_config_values(p, valid - 1, cfg);
    }
    free(cfg);
    cutune_problem_destroy(p);
    return 0;
}
