/* libFuzzer target for the compiled conditions of the search space: parse
 * any bytes (the first byte chooses the operand types), compile what parses
 * into a program for its value and one for its truth, and run both on ten
 * sets of edge values (zeros of both signs, the int64 limits, NaN,
 * infinities) against the tree evaluator. A program may be undecided; when
 * it decides, it must agree with the tree evaluator exactly (value, type,
 * sign of zero) and must not succeed where the tree evaluator fails. Any
 * disagreement aborts with the input kept. Built only by tests/fuzz/run.sh
 * with TARGET prog. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"

#define MAX_NAMES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const cutune__value *a, const cutune__value *b)
{
    if (a->type != b->type)
        return 0;
    if (a->type == CUTUNE__V_FLOAT) {
        if (isnan(a->u.f) || isnan(b->u.f))
            return isnan(a->u.f) && isnan(b->u.f);
        return a->u.f == b->u.f && signbit(a->u.f) == signbit(b->u.f);
    }
    return a->u.i == b->u.i;
}

/* Binds name i of `e` to a variable type or, a quarter of the time, to a
 * constant list (which programs may use with `in` or len()). */
static void choose_types(const cutune__expr *e, size_t n, uint8_t sel,
                         const cutune__value *list, cutune__vtype *types,
                         const cutune__value **consts)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = cutune__expr_name(e, i);
        consts[i] = NULL;
        switch (((unsigned)name[0] + sel) % 4) {
        case 0: types[i] = CUTUNE__V_INT; break;
        case 1: types[i] = CUTUNE__V_FLOAT; break;
        case 2: types[i] = CUTUNE__V_BOOL; break;
        default: consts[i] = list; types[i] = CUTUNE__V_NONE;
        }
    }
}

static void check_program(const cutune__expr *e, size_t n, uint8_t sel,
                          const cutune__vtype *types,
                          const cutune__value *const *consts, int truth)
{
    static const int64_t ints[] = {0,  1,         -1,        2,          7,
                                   -3, INT64_MAX, INT64_MIN, 3037000500, 64};
    static const double floats[] = {0.0,      -0.0, 0.5, -2.5, 1e308,
                                    INFINITY, NAN,  3.0, -1.0, 0x1p63};
    cutune__expr_prog *g = cutune__expr_compile(
        e, types, consts, truth ? CUTUNE__PROG_TRUTH : CUTUNE__PROG_VALUE);
    if (!g)
        return;
    cutune__slot *slots =
        calloc(cutune__expr_prog_slot_count(g) + 1, sizeof *slots);
    if (!slots) {
        cutune__expr_prog_free(g);
        return;
    }
    cutune__expr_prog_init_slots(g, slots);
    for (int r = 0; r < 10; r++) {
        cutune__value vars[MAX_NAMES];
        for (size_t i = 0; i < n; i++) {
            size_t k = ((size_t)r * 7 + i * 3 + sel) % 10;
            if (consts[i]) {
                vars[i] = *consts[i];
            } else if (types[i] == CUTUNE__V_FLOAT) {
                vars[i].type = CUTUNE__V_FLOAT;
                vars[i].u.f = slots[i].f = floats[k];
            } else if (types[i] == CUTUNE__V_BOOL) {
                vars[i].type = CUTUNE__V_BOOL;
                vars[i].u.i = slots[i].i = (int64_t)(k & 1);
            } else {
                vars[i].type = CUTUNE__V_INT;
                vars[i].u.i = slots[i].i = ints[k];
            }
        }
        cutune__expr_error err;
        cutune__value want, got;
        int rc = cutune__expr_eval(e, vars, &want, &err);
        if (!truth) {
            if (cutune__expr_prog_eval(g, slots, &got) == 0 &&
                (rc != 0 || !same(&want, &got))) {
                fprintf(stderr, "value differs from the tree evaluator\n");
                abort();
            }
        } else {
            int t = cutune__expr_prog_truth(g, slots);
            if (t >= 0 && (rc != 0 || t != cutune__value_truthy(&want))) {
                fprintf(stderr, "truth differs from the tree evaluator\n");
                abort();
            }
        }
        if (rc == 0)
            cutune__value_clear(&want);
    }
    free(slots);
    cutune__expr_prog_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    cutune__expr_error err;
    cutune__expr *e = cutune__expr_parse(text, 4096, &err);
    free(text);
    if (!e)
        return 0;
    size_t n = cutune__expr_name_count(e);
    if (n <= MAX_NAMES) {
        cutune__value items[3] = {{CUTUNE__V_INT, {.i = 1}},
                                  {CUTUNE__V_INT, {.i = 2}},
                                  {CUTUNE__V_FLOAT, {.f = 0.5}}};
        cutune__value list;
        list.type = CUTUNE__V_LIST;
        list.u.list.items = items;
        list.u.list.n = 3;
        cutune__vtype types[MAX_NAMES];
        const cutune__value *consts[MAX_NAMES];
        choose_types(e, n, sel, &list, types, consts);
        check_program(e, n, sel, types, consts, 0);
        check_program(e, n, sel, types, consts, 1);
    }
    cutune__expr_free(e);
    return 0;
}
