/* Space construction, index <-> configuration, neighbours, random, nearest,
 * error reporting, and the valid counts of the T1 files of tests/data. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "space/space.h"

#define MAX_VALUES 64

/* A parameter whose values are the integers given, kept alive by the test. */
typedef struct int_param {
    cutune__value values[MAX_VALUES];
    size_t n;
} int_param;

static void int_param_set(int_param *ip, const long long *v, size_t n)
{
    memset(ip, 0, sizeof *ip);
    for (size_t i = 0; i < n; i++) {
        ip->values[i].type = CUTUNE__V_INT;
        ip->values[i].u.i = v[i];
    }
    ip->n = n;
}

static void int_param_range(int_param *ip, long long lo, long long hi)
{
    long long v[MAX_VALUES];
    size_t n = 0;
    for (long long x = lo; x <= hi; x++)
        v[n++] = x;
    int_param_set(ip, v, n);
}

/* Builds a space from condition texts; NULL (with *err) on failure. */
static cutune__space *build(const cutune__param *params, size_t n_params,
                            const char *const *texts, size_t n_conds,
                            const cutune__constant *constants,
                            size_t n_constants, cutune__space_error *err)
{
    cutune__expr *conds[16];
    cutune__space *s = NULL;
    size_t parsed = 0;
    for (; parsed < n_conds; parsed++) {
        cutune__expr_error ee;
        conds[parsed] = cutune__expr_parse(texts[parsed], 0, &ee);
        if (!conds[parsed]) {
            fprintf(stderr, "parse failed: %s: %s\n", texts[parsed],
                    ee.message);
            goto out;
        }
    }
    s = cutune__space_create(params, n_params,
                             (const cutune__expr *const *)conds, n_conds,
                             constants, n_constants, err);
out:
    for (size_t i = 0; i < parsed; i++)
        cutune__expr_free(conds[i]);
    return s;
}

static long long int_of(const cutune__space *s, size_t p, size_t index)
{
    const uint32_t *c = cutune__space_config(s, index);
    return cutune__space_value(s, p, c[p])->u.i;
}

static int lex_less(const uint32_t *a, const uint32_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i])
            return a[i] < b[i];
    }
    return 0;
}

/* x, y in 1..8, z in 0..3 with a chained comparison and a modulo. */
static void test_counts_and_order(void)
{
    int_param x, y, z;
    int_param_range(&x, 1, 8);
    int_param_range(&y, 1, 8);
    int_param_range(&z, 0, 3);
    cutune__param params[] = {
        {"x", x.values, x.n}, {"y", y.values, y.n}, {"z", z.values, z.n}};
    const char *conds[] = {"x <= y", "4 <= x * y <= 24", "(x + z) % 3 != 1"};
    cutune__space_error err;
    cutune__space *s = build(params, 3, conds, 3, NULL, 0, &err);
    CHECK(s != NULL);
    if (!s)
        return;

    size_t expected = 0;
    for (int a = 1; a <= 8; a++)
        for (int b = 1; b <= 8; b++)
            for (int c = 0; c <= 3; c++)
                expected +=
                    a <= b && 4 <= a * b && a * b <= 24 && (a + c) % 3 != 1;
    CHECK_INT(expected, 55);
    CHECK_INT(cutune__space_size(s), 55);
    CHECK_NEAR(cutune__space_cartesian_size(s), 256.0, 0);
    CHECK_INT(cutune__space_param_count(s), 3);
    CHECK_STR(cutune__space_param_name(s, 1), "y");
    CHECK_INT(cutune__space_find_param(s, "z"), 2);
    CHECK_INT(cutune__space_find_param(s, "w"), SIZE_MAX);
    CHECK_INT(cutune__space_value_count(s, 2), 4);
    CHECK_INT(cutune__space_value(s, 0, 7)->u.i, 8);
    CHECK(cutune__space_value(s, 0, 8) == NULL);
    CHECK(cutune__space_config(s, 55) == NULL);

    /* Every valid configuration satisfies the conditions, in order, and
     * maps back to its own index. */
    int all_ok = 1, sorted = 1, round_trip = 1;
    for (size_t i = 0; i < cutune__space_size(s); i++) {
        long long a = int_of(s, 0, i), b = int_of(s, 1, i),
                  c = int_of(s, 2, i);
        if (!(a <= b && 4 <= a * b && a * b <= 24 && (a + c) % 3 != 1))
            all_ok = 0;
        if (i > 0 && !lex_less(cutune__space_config(s, i - 1),
                               cutune__space_config(s, i), 3))
            sorted = 0;
        size_t back = SIZE_MAX;
        if (!cutune__space_index_of(s, cutune__space_config(s, i), &back) ||
            back != i)
            round_trip = 0;
    }
    CHECK(all_ok);
    CHECK(sorted);
    CHECK(round_trip);

    uint32_t invalid[3] = {7, 0, 0}; /* x = 8, y = 1 breaks x <= y */
    size_t idx = 12345;
    CHECK_INT(cutune__space_index_of(s, invalid, &idx), 0);
    CHECK_INT(idx, 12345);
    uint32_t out_of_range[3] = {0, 99, 0};
    CHECK_INT(cutune__space_index_of(s, out_of_range, &idx), 0);
    cutune__space_free(s);
}

/* a in {10, 20, 30}, b in {0, 1, 2} without (20, 1): the valid indices are
 * 0 (10,0) 1 (10,1) 2 (10,2) 3 (20,0) 4 (20,2) 5 (30,0) 6 (30,1) 7 (30,2). */
static cutune__space *tiny_space(void)
{
    static int_param a, b;
    static const long long av[] = {10, 20, 30};
    int_param_set(&a, av, 3);
    int_param_range(&b, 0, 2);
    cutune__param params[] = {{"a", a.values, a.n}, {"b", b.values, b.n}};
    const char *conds[] = {"not (a == 20 and b == 1)"};
    return build(params, 2, conds, 1, NULL, 0, NULL);
}

static int same_list(const size_t *got, size_t n_got, const size_t *want,
                     size_t n_want)
{
    if (n_got != n_want)
        return 0;
    for (size_t i = 0; i < n_got; i++) {
        if (got[i] != want[i])
            return 0;
    }
    return 1;
}

static void test_neighbours(void)
{
    cutune__space *s = tiny_space();
    size_t out[16], n;
    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_INT(cutune__space_size(s), 8);

    static const size_t adj1[] = {0, 2};
    n = cutune__space_neighbours(s, 1, CUTUNE__NEIGHBOUR_ADJACENT, out, 16);
    CHECK(same_list(out, n, adj1, 2));

    static const size_t adj3[] = {0, 5};
    n = cutune__space_neighbours(s, 3, CUTUNE__NEIGHBOUR_ADJACENT, out, 16);
    CHECK(same_list(out, n, adj3, 2));

    static const size_t adj7[] = {4, 6};
    n = cutune__space_neighbours(s, 7, CUTUNE__NEIGHBOUR_ADJACENT, out, 16);
    CHECK(same_list(out, n, adj7, 2));

    static const size_t any3[] = {0, 5, 4};
    n = cutune__space_neighbours(s, 3, CUTUNE__NEIGHBOUR_ANY, out, 16);
    CHECK(same_list(out, n, any3, 3));

    static const size_t any7[] = {2, 4, 5, 6};
    n = cutune__space_neighbours(s, 7, CUTUNE__NEIGHBOUR_ANY, out, 16);
    CHECK(same_list(out, n, any7, 4));

    /* The count is the full count; only cap entries are written. */
    out[0] = out[1] = 999;
    n = cutune__space_neighbours(s, 7, CUTUNE__NEIGHBOUR_ANY, out, 1);
    CHECK_INT(n, 4);
    CHECK_INT(out[0], 2);
    CHECK_INT(out[1], 999);
    CHECK_INT(cutune__space_neighbours(s, 7, CUTUNE__NEIGHBOUR_ANY, NULL, 0),
              4);
    CHECK_INT(cutune__space_neighbours(s, 8, CUTUNE__NEIGHBOUR_ANY, out, 16),
              0);
    cutune__space_free(s);
}

static void test_nearest(void)
{
    cutune__space *s = tiny_space();
    CHECK(s != NULL);
    if (!s)
        return;
    uint32_t c[2] = {1, 1};
    /* (20,1) is invalid; four configurations differ in one parameter by one
     * step, and the lowest index wins. */
    CHECK_INT(cutune__space_nearest(s, c), 1);
    c[0] = 2;
    c[1] = 1;
    CHECK_INT(cutune__space_nearest(s, c), 6);
    c[0] = 5;
    c[1] = 5;
    CHECK_INT(cutune__space_nearest(s, c), 7);
    /* Out of range: only b can match, and 30 is nearer to index 5. */
    c[0] = 5;
    c[1] = 1;
    CHECK_INT(cutune__space_nearest(s, c), 6);
    cutune__space_free(s);

    /* Against an exhaustive scan on a larger space. */
    int_param x, y, z;
    int_param_range(&x, 1, 8);
    int_param_range(&y, 1, 8);
    int_param_range(&z, 0, 3);
    cutune__param params[] = {
        {"x", x.values, x.n}, {"y", y.values, y.n}, {"z", z.values, z.n}};
    const char *conds[] = {"x <= y", "4 <= x * y <= 24", "(x + z) % 3 != 1"};
    s = build(params, 3, conds, 3, NULL, 0, NULL);
    CHECK(s != NULL);
    if (!s)
        return;
    int agree = 1;
    for (uint32_t a = 0; a < 9; a++)
        for (uint32_t b = 0; b < 9; b++)
            for (uint32_t d = 0; d < 5; d++) {
                uint32_t t[3] = {a, b, d};
                size_t best = SIZE_MAX, bm = 0;
                unsigned long long bd = 0;
                for (size_t i = 0; i < cutune__space_size(s); i++) {
                    const uint32_t *k = cutune__space_config(s, i);
                    size_t m = 0;
                    unsigned long long dist = 0;
                    for (int p = 0; p < 3; p++) {
                        m += k[p] != t[p];
                        dist += k[p] > t[p] ? k[p] - t[p] : t[p] - k[p];
                    }
                    if (best == SIZE_MAX || m < bm || (m == bm && dist < bd)) {
                        best = i;
                        bm = m;
                        bd = dist;
                    }
                }
                if (cutune__space_nearest(s, t) != best)
                    agree = 0;
            }
    CHECK(agree);
    cutune__space_free(s);
}

static void test_random(void)
{
    cutune__space *s = tiny_space();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    size_t counts[8] = {0};
    const size_t draws = 80000;
    CHECK(s != NULL && rng != NULL);
    if (!s || !rng) {
        cutune__space_free(s);
        if (rng)
            gsl_rng_free(rng);
        return;
    }
    gsl_rng_set(rng, 42);
    int in_range = 1;
    for (size_t i = 0; i < draws; i++) {
        size_t r = cutune__space_random(s, rng);
        if (r >= 8)
            in_range = 0;
        else
            counts[r]++;
    }
    CHECK(in_range);
    /* 10000 expected each; 5 standard deviations is about 470. */
    int uniform = 1;
    for (int i = 0; i < 8; i++) {
        if (counts[i] < 9500 || counts[i] > 10500)
            uniform = 0;
    }
    CHECK(uniform);
    gsl_rng_free(rng);
    cutune__space_free(s);
}

static void test_constants_and_edge_cases(void)
{
    int_param x, y, z;
    int_param_range(&x, 1, 8);
    int_param_range(&y, 1, 8);
    int_param_range(&z, 0, 3);
    cutune__param params[] = {
        {"x", x.values, x.n}, {"y", y.values, y.n}, {"z", z.values, z.n}};
    cutune__value ps_items[2];
    ps_items[0].type = CUTUNE__V_INT;
    ps_items[0].u.i = 3;
    ps_items[1].type = CUTUNE__V_INT;
    ps_items[1].u.i = 7;
    cutune__value ps;
    ps.type = CUTUNE__V_LIST;
    ps.u.list.items = ps_items;
    ps.u.list.n = 2;
    cutune__constant constants[] = {{"ProblemSize", &ps}};
    const char *with_const[] = {"x < ProblemSize[1] and x * y < 10"};
    cutune__space_error err;
    cutune__space *s = build(params, 3, with_const, 1, constants, 1, &err);
    CHECK(s != NULL);
    if (s)
        CHECK_INT(cutune__space_size(s), 76);
    cutune__space_free(s);

    /* A condition naming no parameter is decided once. */
    const char *never[] = {"1 > 2"};
    s = build(params, 3, never, 1, NULL, 0, &err);
    CHECK(s != NULL);
    if (s)
        CHECK_INT(cutune__space_size(s), 0);
    if (s)
        CHECK_INT(cutune__space_nearest(s, (const uint32_t[]){0, 0, 0}),
                  SIZE_MAX);
    cutune__space_free(s);
    const char *always[] = {"2 > 1"};
    s = build(params, 3, always, 1, NULL, 0, &err);
    CHECK(s != NULL);
    if (s)
        CHECK_INT(cutune__space_size(s), 256);
    cutune__space_free(s);

    /* No conditions at all, and a parameter without values. */
    s = build(params, 3, NULL, 0, NULL, 0, &err);
    CHECK(s != NULL);
    if (s)
        CHECK_INT(cutune__space_size(s), 256);
    cutune__space_free(s);
    cutune__param with_empty[] = {{"x", x.values, x.n}, {"e", NULL, 0}};
    s = build(with_empty, 2, NULL, 0, NULL, 0, &err);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(cutune__space_size(s), 0);
        CHECK_NEAR(cutune__space_cartesian_size(s), 0.0, 0);
    }
    cutune__space_free(s);
    const char *on_empty[] = {"x > 1", "x * e > 3"};
    s = build(with_empty, 2, on_empty, 2, NULL, 0, &err);
    CHECK(s != NULL);
    if (s)
        CHECK_INT(cutune__space_size(s), 0);
    cutune__space_free(s);

    /* String values, copied at create. */
    cutune__value sv[2];
    sv[0].type = CUTUNE__V_STR;
    sv[0].u.s = "ca";
    sv[1].type = CUTUNE__V_STR;
    sv[1].u.s = "cg";
    cutune__param with_str[] = {{"x", x.values, x.n}, {"load", sv, 2}};
    const char *str_cond[] = {"load == 'ca' or x > 6"};
    s = build(with_str, 2, str_cond, 1, NULL, 0, &err);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(cutune__space_size(s), 10);
        CHECK(cutune__space_value(s, 1, 1) != &sv[1]);
        CHECK_STR(cutune__space_value(s, 1, 1)->u.s, "cg");
    }
    cutune__space_free(s);

    cutune__space_free(NULL);
}

static void test_errors(void)
{
    int_param x, y;
    int_param_range(&x, 1, 4);
    int_param_range(&y, 0, 3);
    cutune__param params[] = {{"x", x.values, x.n}, {"y", y.values, y.n}};
    cutune__space_error err;

    const char *unknown[] = {"x < 3", "x * y < block_size_q"};
    CHECK(build(params, 2, unknown, 2, NULL, 0, &err) == NULL);
    CHECK_INT(err.condition, 1);
    CHECK_CONTAINS(err.message, "block_size_q");
    CHECK_CONTAINS(err.message, "condition 1");

    /* y is 0 for some configurations. */
    const char *div0[] = {"x > 0", "x // y > 0"};
    CHECK(build(params, 2, div0, 2, NULL, 0, &err) == NULL);
    CHECK_INT(err.condition, 1);
    CHECK_CONTAINS(err.message, "condition 1");
    CHECK(err.expr.message[0] != '\0');
    CHECK_CONTAINS(err.message, err.expr.message);

    cutune__param twice[] = {{"x", x.values, x.n}, {"x", y.values, y.n}};
    CHECK(build(twice, 2, NULL, 0, NULL, 0, &err) == NULL);
    CHECK_INT(err.condition, SIZE_MAX);
    CHECK_CONTAINS(err.message, "x");
    /* err may be NULL. */
    CHECK(build(params, 2, unknown, 2, NULL, 0, NULL) == NULL);
}

/* ---- against a plain enumeration ---- */

/* What the space must hold: parameters bound in their own order, each
 * condition evaluated by the tree evaluator once its last parameter is
 * bound (in the caller's order within a depth), configurations in
 * lexicographic order; or the first evaluation error. */
typedef struct reference {
    uint32_t *configs;
    size_t n, cap;
    int failed;
    size_t condition;
    char message[256];
} reference;

typedef struct ref_condition {
    const cutune__expr *e;
    size_t level;
    size_t names;
    size_t *param_of; /* SIZE_MAX: a constant, in vars already */
    cutune__value *vars;
} ref_condition;

static int ref_check(ref_condition *rc, size_t n_rc, size_t level,
                     const cutune__param *params, const uint32_t *cfg,
                     reference *ref)
{
    for (size_t c = 0; c < n_rc; c++) {
        if (rc[c].level != level)
            continue;
        for (size_t i = 0; i < rc[c].names; i++)
            if (rc[c].param_of[i] != SIZE_MAX)
                rc[c].vars[i] =
                    params[rc[c].param_of[i]].values[cfg[rc[c].param_of[i]]];
        cutune__value out;
        cutune__expr_error ee;
        if (cutune__expr_eval(rc[c].e, rc[c].vars, &out, &ee)) {
            ref->failed = 1;
            ref->condition = c;
            snprintf(ref->message, sizeof ref->message, "%s", ee.message);
            return -1;
        }
        int ok = cutune__value_truthy(&out);
        cutune__value_clear(&out);
        if (!ok)
            return 0;
    }
    return 1;
}

static void ref_visit(ref_condition *rc, size_t n_rc,
                      const cutune__param *params, size_t np, uint32_t *cfg,
                      size_t d, reference *ref)
{
    if (ref->failed)
        return;
    if (d == np) {
        if (ref->n == ref->cap) {
            ref->cap = ref->cap ? 2 * ref->cap : 64;
            ref->configs = realloc(ref->configs, ref->cap * (np ? np : 1) *
                                                     sizeof *ref->configs);
        }
        memcpy(ref->configs + ref->n * np, cfg, np * sizeof *cfg);
        ref->n++;
        return;
    }
    for (uint32_t v = 0; v < params[d].n_values && !ref->failed; v++) {
        cfg[d] = v;
        if (ref_check(rc, n_rc, d + 1, params, cfg, ref) > 0)
            ref_visit(rc, n_rc, params, np, cfg, d + 1, ref);
    }
}

static void ref_build(const cutune__param *params, size_t np,
                      cutune__expr *const *conds, size_t nc,
                      const cutune__constant *constants, size_t n_constants,
                      reference *ref)
{
    ref_condition *rc = calloc(nc ? nc : 1, sizeof *rc);
    uint32_t *cfg = calloc(np ? np : 1, sizeof *cfg);
    memset(ref, 0, sizeof *ref);
    for (size_t c = 0; c < nc; c++) {
        rc[c].e = conds[c];
        rc[c].names = cutune__expr_name_count(conds[c]);
        rc[c].param_of = calloc(rc[c].names + 1, sizeof *rc[c].param_of);
        rc[c].vars = calloc(rc[c].names + 1, sizeof *rc[c].vars);
        for (size_t i = 0; i < rc[c].names; i++) {
            const char *name = cutune__expr_name(conds[c], i);
            rc[c].param_of[i] = SIZE_MAX;
            for (size_t p = 0; p < np; p++)
                if (strcmp(params[p].name, name) == 0) {
                    rc[c].param_of[i] = p;
                    if (p + 1 > rc[c].level)
                        rc[c].level = p + 1;
                }
            for (size_t k = 0; k < n_constants; k++)
                if (strcmp(constants[k].name, name) == 0)
                    rc[c].vars[i] = *constants[k].value;
        }
    }
    if (ref_check(rc, nc, 0, params, cfg, ref) > 0)
        ref_visit(rc, nc, params, np, cfg, 0, ref);
    for (size_t c = 0; c < nc; c++) {
        free(rc[c].param_of);
        free(rc[c].vars);
    }
    free(rc);
    free(cfg);
}

/* 1 when the space holds exactly the reference's configurations, in its
 * order, or fails where it does. A reference failure may also be a space
 * that never evaluates the failing combination (another binding order
 * excluded it earlier): counted in *skipped. */
static int same_as_reference(const cutune__param *params, size_t np,
                             cutune__expr *const *conds, size_t nc,
                             const cutune__constant *constants,
                             size_t n_constants, size_t *skipped)
{
    reference ref;
    ref_build(params, np, conds, nc, constants, n_constants, &ref);
    cutune__space_error err;
    cutune__space *s =
        cutune__space_create(params, np, (const cutune__expr *const *)conds,
                             nc, constants, n_constants, &err);
    int same = 1;
    if (ref.failed && !s) {
        same = err.condition == ref.condition &&
               strcmp(err.expr.message, ref.message) == 0;
    } else if (ref.failed) {
        ++*skipped;
    } else if (!s) {
        fprintf(stderr, "space failed: %s\n", err.message);
        same = 0;
    } else {
        same = cutune__space_size(s) == ref.n;
        for (size_t i = 0; same && i < ref.n; i++)
            same = memcmp(cutune__space_config(s, i), ref.configs + i * np,
                          np * sizeof *ref.configs) == 0;
    }
    cutune__space_free(s);
    free(ref.configs);
    return same;
}

static uint64_t space_rng = 99;

static size_t rand_below(size_t n)
{
    space_rng = space_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (size_t)((space_rng >> 33) % n);
}

/* Random spaces of up to six parameters (int, float, bool, string and
 * mixed values, some of one value, some named by no condition) and conditions
 * of the kinds T1 files use, some of which fail to evaluate (division by zero)
 * or leave compiled programs undecided (int ** negative int), against the
 * plain enumeration: the same configurations in the same order, or the same
 * error. This covers compiled conditions, their memo, the binding order, the
 * sort and the fallback to the file's order. */
static void test_matches_plain_enumeration(void)
{
    enum { SPACES = 1500 };
    static const char *const templates[] = {"%s %% %s == 0",
                                            "%s * %s <= 8",
                                            "%s // %s >= 1",
                                            "%s < %s <= %s",
                                            "%s != %s or %s > 0",
                                            "%s ** %s > 2",
                                            "%s / %s < 2.5",
                                            "%s in [0, 2, 4, 8]",
                                            "max(%s, %s) > %s",
                                            "not (%s == 1 and %s == 2)",
                                            "%s + ProblemSize[0] > %s",
                                            "(%s if %s else %s) > 1",
                                            "%s - %s != 0",
                                            "%s == 1 or %s > %s"};
    static const long long ints[] = {-2, -1, 0, 1, 2, 3, 4, 6, 8, 16, 32};
    static const double floats[] = {-1.5, 0.0, 0.5, 1.0, 2.0, 3.5};
    static char *const strs[] = {"x", "y", "z"};
    cutune__value ps_items[2] = {{CUTUNE__V_INT, {.i = 3}},
                                 {CUTUNE__V_INT, {.i = 5}}};
    cutune__value ps;
    ps.type = CUTUNE__V_LIST;
    ps.u.list.items = ps_items;
    ps.u.list.n = 2;
    cutune__constant constants[] = {{"ProblemSize", &ps}};
    size_t skipped = 0, failed_spaces = 0, agree = 0;
    for (int k = 0; k < SPACES; k++) {
        size_t np = 2 + rand_below(5), nc = 1 + rand_below(4);
        cutune__value values[6][5];
        cutune__param params[6];
        char names[6][24];
        int has_str = -1;
        for (size_t p = 0; p < np; p++) {
            size_t kind = rand_below(10), nv = 1 + rand_below(5);
            snprintf(names[p], sizeof names[p], "p%zu", p);
            for (size_t v = 0; v < nv; v++) {
                cutune__value *x = &values[p][v];
                if (kind < 6 || (kind == 6 && v % 2 == 0)) {
                    x->type = CUTUNE__V_INT;
                    x->u.i = ints[rand_below(sizeof ints / sizeof *ints)];
                } else if (kind < 8) { /* kind 6: ints and floats mixed */
                    x->type = CUTUNE__V_FLOAT;
                    x->u.f = floats[rand_below(6)];
                } else if (kind < 9) {
                    x->type = CUTUNE__V_BOOL;
                    x->u.i = (int64_t)(v & 1);
                } else {
                    x->type = CUTUNE__V_STR;
                    x->u.s = strs[v % 3];
                    has_str = (int)p;
                }
            }
            params[p].name = names[p];
            params[p].values = values[p];
            params[p].n_values = nv;
        }
        cutune__expr *conds[5];
        char text[5][128];
        for (size_t c = 0; c < nc; c++) {
            const char *a = names[rand_below(np)], *b = names[rand_below(np)],
                       *d = names[rand_below(np)];
            if (has_str >= 0 && rand_below(4) == 0)
                snprintf(text[c], sizeof text[c], "%s == 'x' or %s > 1",
                         names[has_str], a);
            else
                snprintf(text[c], sizeof text[c],
                         templates[rand_below(sizeof templates /
                                              sizeof *templates)],
                         a, b, d);
            conds[c] = cutune__expr_parse(text[c], 0, NULL);
        }
        reference ref;
        ref_build(params, np, conds, nc, constants, 1, &ref);
        failed_spaces += ref.failed;
        free(ref.configs);
        if (same_as_reference(params, np, conds, nc, constants, 1, &skipped)) {
            agree++;
        } else {
            fprintf(stderr, "space %d differs:", k);
            for (size_t c = 0; c < nc; c++)
                fprintf(stderr, " [%s]", text[c]);
            fprintf(stderr, "\n");
        }
        for (size_t c = 0; c < nc; c++)
            cutune__expr_free(conds[c]);
    }
    CHECK_INT(agree, SPACES);
    /* Errors are exercised, and mostly found by the space too. */
    CHECK(failed_spaces > 20);
    CHECK(skipped < failed_spaces / 2);
    printf("plain enumeration: %d spaces agree (%zu failing, %zu of them "
           "without the failing evaluation)\n",
           SPACES, failed_spaces, skipped);
}

/* More parameters than the exact binding order handles (greedy), and a
 * cartesian size beyond 64 bits (configurations recorded and sorted as
 * rows). A parameter no condition names (w, bound last) and one of one
 * value (z, bound first) make the binding order differ from the file's. */
static void test_many_parameters(void)
{
    static const struct {
        size_t chain, values;
    } shapes[] = {{20, 3}, {70, 2}};
    for (size_t k = 0; k < 2; k++) {
        size_t n = shapes[k].chain, nv = shapes[k].values, np = n + 2;
        cutune__value values[3] = {{CUTUNE__V_INT, {.i = 0}},
                                   {CUTUNE__V_INT, {.i = 1}},
                                   {CUTUNE__V_INT, {.i = 2}}};
        cutune__param params[72];
        char names[72][24], text[72][64];
        cutune__expr *conds[72];
        for (size_t p = 0; p < np; p++) {
            /* x0, w, x1 ... x(n-1), z */
            if (p == 1)
                snprintf(names[p], sizeof names[p], "w");
            else if (p == np - 1)
                snprintf(names[p], sizeof names[p], "z");
            else
                snprintf(names[p], sizeof names[p], "x%zu", p ? p - 1 : 0);
            params[p].name = names[p];
            params[p].values = values;
            params[p].n_values = p == np - 1 ? 1 : p == 1 ? 2 : nv;
        }
        size_t nc = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            /* Listed back to front, so the file's order is not best. */
            snprintf(text[nc], sizeof text[nc], "x%zu <= x%zu", n - 2 - i,
                     n - 1 - i);
            conds[nc] = cutune__expr_parse(text[nc], 0, NULL);
            nc++;
        }
        snprintf(text[nc], sizeof text[nc], "x0 + x%zu != 3 and z <= x0",
                 n - 1);
        conds[nc] = cutune__expr_parse(text[nc], 0, NULL);
        nc++;
        size_t skipped = 0;
        CHECK(same_as_reference(params, np, conds, nc, NULL, 0, &skipped));
        CHECK_INT(skipped, 0);
        cutune__space *s = cutune__space_create(
            params, np, (const cutune__expr *const *)conds, nc, NULL, 0, NULL);
        CHECK(s != NULL);
        /* Non-decreasing chains, less those from 1 to 2 (20 x 3); all 71
         * non-decreasing ones of 70 x 2; twice, for w. */
        if (s)
            CHECK_INT(cutune__space_size(s), k == 0 ? 2 * (231 - 19) : 2 * 71);
        cutune__space_free(s);
        for (size_t c = 0; c < nc; c++)
            cutune__expr_free(conds[c]);
    }
}

/* ---- the T1 files of tests/data ---- */

static int load_values(json_t *jv, cutune__value *out)
{
    cutune__expr_error ee;
    if (json_is_string(jv))
        return cutune__expr_eval_const(json_string_value(jv), out, &ee);
    return -1;
}

/* Builds the space of one T1 file; returns 0 and fills *size, *cartesian
 * and *seconds, or -1. */
static int load_t1(const char *path, size_t *size, double *cartesian,
                   double *seconds)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        return -1;
    json_t *cs = json_object_get(root, "ConfigurationSpace");
    json_t *tps = json_object_get(cs, "TuningParameters");
    json_t *conds = json_object_get(cs, "Conditions");
    size_t np = json_array_size(tps), nc = json_array_size(conds);
    cutune__param *params = calloc(np ? np : 1, sizeof *params);
    cutune__value *lists = calloc(np ? np : 1, sizeof *lists);
    cutune__expr **exprs = calloc(nc ? nc : 1, sizeof *exprs);
    int rc = -1;
    size_t loaded = 0, parsed = 0;
    if (!params || !lists || !exprs)
        goto out;
    for (; loaded < np; loaded++) {
        json_t *tp = json_array_get(tps, loaded);
        if (load_values(json_object_get(tp, "Values"), &lists[loaded]) ||
            lists[loaded].type != CUTUNE__V_LIST)
            goto out;
        params[loaded].name = json_string_value(json_object_get(tp, "Name"));
        params[loaded].values = lists[loaded].u.list.items;
        params[loaded].n_values = lists[loaded].u.list.n;
    }
    for (; parsed < nc; parsed++) {
        json_t *c = json_array_get(conds, parsed);
        const char *text = json_string_value(json_object_get(c, "Expression"));
        if (!text || !(exprs[parsed] = cutune__expr_parse(text, 0, NULL)))
            goto out;
    }
    cutune__space_error err;
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    cutune__space *s = cutune__space_create(
        params, np, (const cutune__expr *const *)exprs, nc, NULL, 0, &err);
    timespec_get(&t1, TIME_UTC);
    if (!s) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        goto out;
    }
    *size = cutune__space_size(s);
    *cartesian = cutune__space_cartesian_size(s);
    *seconds = (double)(t1.tv_sec - t0.tv_sec) +
               (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cutune__space_free(s);
    rc = 0;
out:
    for (size_t i = 0; i < parsed; i++)
        cutune__expr_free(exprs[i]);
    for (size_t i = 0; i < loaded; i++)
        cutune__value_clear(&lists[i]);
    free(exprs);
    free(lists);
    free(params);
    json_decref(root);
    return rc;
}

static void test_t1_files(void)
{
    static const struct {
        const char *file;
        size_t valid;
        double cartesian;
    } files[] = {
        {"convolution_milo.json", 4362, 10240},
        {"dedispersion_milo.json", 11130, 22272},
        {"hotspot_milo.json", 82984, 4440000},
        {"gemm_milo.json", 116928, 663552},
    };
    const char *dir = getenv("CUTUNE_TEST_DATA");
    CHECK(dir && *dir);
    if (!dir)
        dir = "";
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/t1/%s", dir, files[i].file);
        FILE *f = fopen(path, "r");
        /* The data is part of the tree: missing is a failure. */
        CHECK(f != NULL);
        if (!f) {
            fprintf(stderr, "missing test data: %s\n", path);
            continue;
        }
        fclose(f);
        size_t size = 0;
        double cart = 0, secs = 0;
        CHECK_INT(load_t1(path, &size, &cart, &secs), 0);
        CHECK_INT(size, files[i].valid);
        CHECK_NEAR(cart, files[i].cartesian, 0);
        printf("%s: %zu valid of %.0f, built in %.3f s\n", files[i].file, size,
               cart, secs);
    }
}

int main(void)
{
    test_counts_and_order();
    test_neighbours();
    test_nearest();
    test_random();
    test_constants_and_edge_cases();
    test_errors();
    test_matches_plain_enumeration();
    test_many_parameters();
    test_t1_files();
    return check_finish();
}
