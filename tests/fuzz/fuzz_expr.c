/* libFuzzer target for the T1 expression language: parse any bytes, and
 * evaluate what parses with every free name bound, alternately, to an
 * integer, a list and a string, so that the evaluator sees all operand
 * types. The libFuzzer binary is built by tests/fuzz/run.sh (or
 * -DCUTUNE_FUZZ=ON); every build makes fuzz_expr_replay, the plain driver
 * that CTest runs over the corpus. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"

/* A small list limit keeps each input fast: the limit is what stops a
 * hostile expression, and its size does not change the code paths. */
#define FUZZ_MAX_LIST 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cutune__expr_error err;
    cutune__expr *e = cutune__expr_parse(text, FUZZ_MAX_LIST, &err);
    free(text);
    if (!e)
        return 0;
    (void)cutune__expr_text(e);

    cutune__value items[3] = {{CUTUNE__V_INT, {.i = 1}},
                              {CUTUNE__V_INT, {.i = 2}},
                              {CUTUNE__V_FLOAT, {.f = 0.5}}};
    cutune__value kinds[3];
    kinds[0].type = CUTUNE__V_INT;
    kinds[0].u.i = 7;
    kinds[1].type = CUTUNE__V_LIST;
    kinds[1].u.list.items = items;
    kinds[1].u.list.n = 3;
    kinds[2].type = CUTUNE__V_STR;
    kinds[2].u.s = (char *)"ca";
    size_t n = cutune__expr_name_count(e);
    cutune__value *vars = calloc(n ? n : 1, sizeof *vars);
    if (vars) {
        for (size_t round = 0; round < 2; round++) {
            for (size_t i = 0; i < n; i++) {
                (void)cutune__expr_name(e, i);
                vars[i] = kinds[(i + round) % 3];
            }
            cutune__value out;
            if (cutune__expr_eval(e, vars, &out, &err) == 0) {
                char *t = cutune__value_to_text(&out);
                free(t);
                cutune__value copy;
                if (cutune__value_copy(&copy, &out) == 0) {
                    (void)cutune__value_equal(&copy, &out);
                    (void)cutune__value_truthy(&copy);
                    cutune__value_clear(&copy);
                }
                cutune__value_clear(&out);
            }
        }
        free(vars);
    }
    cutune__expr_free(e);
    return 0;
}
