/* Tests of the T1 expression language: Python semantics, the expressions
 * of the T1 files in tests/data/t1, error reports and value helpers. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "expr/expr.h"

/* The text of a value, or "ERR: message" when evaluation failed; a static
 * buffer, good until the next call. */
static char result_buf[8192];

static const char *show(int rc, cutune__value *v,
                        const cutune__expr_error *err)
{
    if (rc != 0) {
        snprintf(result_buf, sizeof result_buf, "ERR: %s", err->message);
        return result_buf;
    }
    char *t = cutune__value_to_text(v);
    snprintf(result_buf, sizeof result_buf, "%s", t ? t : "(oom)");
    free(t);
    cutune__value_clear(v);
    return result_buf;
}

static const char *ev(const char *text)
{
    cutune__value v;
    cutune__expr_error err;
    int rc = cutune__expr_eval_const(text, &v, &err);
    return show(rc, &v, &err);
}

/* A name binding for the tests: name -> value. */
typedef struct binding {
    const char *name;
    cutune__value value;
} binding;

static cutune__value I(int64_t i)
{
    cutune__value v;
    v.type = CUTUNE__V_INT;
    v.u.i = i;
    return v;
}

/* Borrowed list over a static array. */
static cutune__value L(cutune__value *items, size_t n)
{
    cutune__value v;
    v.type = CUTUNE__V_LIST;
    v.u.list.items = items;
    v.u.list.n = n;
    return v;
}

/* Parses with max_list, binds every free name from `b` (n of them) and
 * evaluates. Unbound names give "ERR: unbound". */
static const char *ev_with(const char *text, size_t max_list, const binding *b,
                           size_t n, cutune__expr_error *err_out)
{
    cutune__expr_error err;
    memset(&err, 0, sizeof err);
    cutune__expr *e = cutune__expr_parse(text, max_list, &err);
    if (!e) {
        if (err_out)
            *err_out = err;
        snprintf(result_buf, sizeof result_buf, "ERR: %s", err.message);
        return result_buf;
    }
    cutune__value vars[32];
    size_t nn = cutune__expr_name_count(e);
    for (size_t i = 0; i < nn && i < 32; i++) {
        const char *name = cutune__expr_name(e, i);
        size_t k = 0;
        while (k < n && strcmp(b[k].name, name) != 0)
            k++;
        if (k == n) {
            cutune__expr_free(e);
            return "ERR: unbound";
        }
        vars[i] = b[k].value;
    }
    cutune__value v;
    int rc = cutune__expr_eval(e, vars, &v, &err);
    if (err_out)
        *err_out = err;
    const char *r = show(rc, &v, &err);
    cutune__expr_free(e);
    return r;
}

#define EV(text, want) CHECK_STR(ev(text), want)

/* Checks that `text` fails (at parse or evaluation) with a message
 * containing `msg`, at `column` with `token`. */
static void check_error(const char *text, size_t max_list, const char *msg,
                        int column, const char *token, int line)
{
    cutune__expr_error err;
    memset(&err, 0, sizeof err);
    const char *r = ev_with(text, max_list, NULL, 0, &err);
    if (strncmp(r, "ERR: ", 5) != 0 || !strstr(err.message, msg) ||
        err.column != column || strcmp(err.token, token) != 0) {
        fprintf(stderr,
                "line %d: `%s`: got \"%s\" col %d token \"%s\"; want \"%s\" "
                "col %d token \"%s\"\n",
                line, text, r, err.column, err.token, msg, column, token);
        check__failed++;
    } else {
        check__passed++;
    }
}

#define ERR(text, msg, col, tok) check_error(text, 0, msg, col, tok, __LINE__)
#define ERR_MAX(text, max, msg, col, tok)                                     \
    check_error(text, max, msg, col, tok, __LINE__)

static void test_literals(void)
{
    EV("0", "0");
    EV("128", "128");
    EV("0x1F", "31");
    EV("0o17", "15");
    EV("0b101", "5");
    EV("9223372036854775807", "9223372036854775807");
    EV("1.5", "1.5");
    EV("1e-3", "0.001");
    EV(".5", "0.5");
    EV("1.", "1.0");
    EV("2.5E2", "250.0");
    EV("True", "True");
    EV("False", "False");
    EV("None", "None");
    EV("'abc'", "abc");
    EV("\"a'b\"", "a'b");
    EV("'it\\'s'", "it's");
    EV("'a\\\\b'", "a\\b");
    EV("'tab\\there'", "tab\there");
    EV("'\\d'", "\\d");
    EV("''", "");
    EV("[1, 2, 4]", "[1, 2, 4]");
    EV("[]", "[]");
    EV("[1, 2,]", "[1, 2]");
    EV("[ -1 , +2 ]", "[-1, 2]");
    EV("[[1], [], ['x', True, 0.5, None]]",
       "[[1], [], ['x', True, 0.5, None]]");
    EV("  \t 1 +\n 2  ", "3");
}

static void test_arithmetic(void)
{
    EV("1 + 2 * 3", "7");
    EV("(1 + 2) * 3", "9");
    EV("10 - 4 - 3", "3");
    EV("7 / 2", "3.5");
    EV("4 / 2", "2.0");
    EV("-7 // 2", "-4");
    EV("7 // -2", "-4");
    EV("-7 // -2", "3");
    EV("7 // 2", "3");
    EV("-7 % 2", "1");
    EV("7 % -2", "-1");
    EV("-7 % -2", "-1");
    EV("6 % 3", "0");
    EV("-7.5 // 2", "-4.0");
    EV("-7.5 % 2", "0.5");
    EV("7.5 % -2", "-0.5");
    EV("5.0 // 0.5", "10.0");
    EV("2 ** 10", "1024");
    EV("2 ** 3 ** 2", "512");
    EV("-2 ** 2", "-4");
    EV("(-2) ** 2", "4");
    EV("2 ** -1", "0.5");
    EV("10 ** -2", "0.01");
    EV("2 ** 0.5", "1.4142135623730951");
    EV("2.5 ** 2", "6.25");
    EV("0 ** 0", "1");
    EV("-3", "-3");
    EV("- - 3", "3");
    EV("+-+3", "-3");
    EV("-(1 + 2)", "-3");
    EV("1 + 2.5", "3.5");
    EV("3 * 1.5", "4.5");
    EV("True + True", "2");
    EV("True * 3", "3");
    EV("-True", "-1");
    EV("True / 2", "0.5");
    EV("0.1 + 0.2", "0.30000000000000004");
    EV("1 / 3", "0.3333333333333333");
    EV("'ab' + 'cd'", "abcd");
    EV("[1] + [2, 3] + []", "[1, 2, 3]");
    EV("[] + []", "[]");
    EV("'ab' * 3", "ababab");
    EV("'ab' * 0", "");
    EV("[1, [2]] * 2", "[1, [2], 1, [2]]");
    EV("2 * [0]", "[0, 0]");
    EV("[0] * -1", "[]");
    EV("[] * 5", "[]");
    EV("'' * 55555555555550", "");
    EV("[] * 9223372036854775807", "[]");
    EV("[7] * True", "[7]");
    EV("1e308 * 10", "inf");
    EV("-1e308 * 10", "-inf");
}

static void test_overflow(void)
{
    EV("2 ** 62", "4611686018427387904");
    EV("(-2) ** 63", "-9223372036854775808");
    EV("1 ** 1000000000000", "1");
    EV("(-1) ** 1000000000001", "-1");
    EV("0 ** 1000000000000", "0");
    EV("-9223372036854775807 - 1", "-9223372036854775808");
    EV("(-9223372036854775807 - 1) % -1", "0");
    EV("(-9223372036854775807 - 1) // 1", "-9223372036854775808");
    ERR("2 ** 63", "integer overflow in **", 3, "**");
    ERR("2 ** 100", "integer overflow", 3, "**");
    ERR("10 ** 19", "integer overflow", 4, "**");
    ERR("9223372036854775807 + 1", "integer overflow in +", 21, "+");
    ERR("-9223372036854775807 - 2", "integer overflow in -", 22, "-");
    ERR("3037000500 * 3037000500", "integer overflow in *", 12, "*");
    ERR("(-9223372036854775807 - 1) // -1", "integer overflow", 28, "//");
    ERR("-(-9223372036854775807 - 1)", "integer overflow", 1, "-");
    ERR("9223372036854775808", "integer literal too large", 1,
        "9223372036854775808");
    ERR("0xffffffffffffffffff", "integer literal too large", 1,
        "0xffffffffffffffffff");
    ERR("2.0 ** 10000", "float overflow", 5, "**");
}

static void test_comparisons(void)
{
    EV("1 < 2", "True");
    EV("2 <= 1", "False");
    EV("1 < 2 < 3", "True");
    EV("1 < 3 < 2", "False");
    EV("3 > 2 > 1 >= 1", "True");
    EV("1 == 1.0 == True", "True");
    EV("1 != 2", "True");
    EV("0.5 < 1", "True");
    EV("2 ** 53 + 1 == 2.0 ** 53", "False");
    EV("2 ** 53 + 1 > 2.0 ** 53", "True");
    EV("'abc' < 'abd'", "True");
    EV("'a' == 'a'", "True");
    EV("'1' == 1", "False");
    EV("[1, 2] < [1, 3]", "True");
    EV("[1, 2] < [1, 2, 0]", "True");
    EV("[1, 2] == [1, 2.0]", "True");
    EV("3 in [1, 2, 3]", "True");
    EV("4 in [1, 2, 3]", "False");
    EV("4 not in [1, 2]", "True");
    EV("2.0 in [1, 2]", "True");
    EV("'b' in 'abc'", "True");
    EV("'x' not in 'abc'", "True");
    EV("[1] in [[1], 2]", "True");
    /* The third operand is never evaluated once the first pair fails. */
    EV("1 < 0 < 1 / 0", "False");
    ERR("1 < 'a'", "unsupported operand types for <: int and str", 3, "<");
    ERR("1 in 2", "argument of type int is not iterable", 3, "in");
    ERR("[1] < [None]", "unsupported operand types for <", 5, "<");

    binding b[] = {{"a", I(4)}, {"b", I(16)}};
    CHECK_STR(ev_with("32 <= a * b <= 1024", 0, b, 2, NULL), "True");
    b[1].value = I(8);
    CHECK_STR(ev_with("32 <= a * b <= 1024", 0, b, 2, NULL), "True");
    b[1].value = I(4);
    CHECK_STR(ev_with("32 <= a * b <= 1024", 0, b, 2, NULL), "False");
    b[0].value = I(512);
    CHECK_STR(ev_with("32 <= a * b <= 1024", 0, b, 2, NULL), "False");
}

static void test_logic(void)
{
    EV("0 and 1 / 0", "0");
    EV("1 or 1 / 0", "1");
    EV("[] and 1 / 0", "[]");
    EV("1 and 2", "2");
    EV("0 or 'x'", "x");
    EV("0 or []", "[]");
    EV("[] or [1]", "[1]");
    EV("1 and 0 or 5", "5");
    EV("0 or 0 or 0", "0");
    EV("1 and 2 and 3", "3");
    EV("not 0", "True");
    EV("not [1]", "False");
    EV("not ''", "True");
    EV("not not 3", "True");
    EV("not 1 == 2", "True");
    EV("True or False and False", "True");
    EV("1 if 0 else 2", "2");
    EV("1 if 1 else 1 / 0", "1");
    EV("'a' if [] else 'b' if 1 else 'c'", "b");
    EV("[x if x % 2 else -x for x in range(4)]", "[0, 1, -2, 3]");
    ERR("0 or 1 / 0", "division by zero", 8, "/");
}

static void test_index(void)
{
    EV("[10, 20, 30][0]", "10");
    EV("[10, 20, 30][-1]", "30");
    EV("[10, 20, 30][-3]", "10");
    EV("[[1, 2], [3]][0][1]", "2");
    EV("'abc'[1]", "b");
    EV("'abc'[-1]", "c");
    EV("[1, 2][True]", "2");
    EV("list(range(10))[4]", "4");
    EV("[[5, 6] for i in range(2)][1][0]", "5");
    ERR("[1, 2][3]", "index 3 out of range for list of 2", 7, "[");
    ERR("[1, 2][-3]", "index -3 out of range for list of 2", 7, "[");
    ERR("'ab'[2]", "index 2 out of range for str of 2", 5, "[");
    ERR("[1, 2][-9223372036854775807 - 1]", "out of range", 7, "[");
    ERR("[1][0.0]", "list indices must be integers, not float", 4, "[");
    ERR("5[0]", "int is not subscriptable", 2, "[");

    cutune__value ps_items[] = {I(4096), I(2048)};
    cutune__value fw_items[] = {I(15)};
    binding b[] = {{"ProblemSize", L(ps_items, 2)},
                   {"filter_width", L(fw_items, 1)},
                   {"i", I(1)}};
    CHECK_STR(ev_with("ProblemSize[0]", 0, b, 3, NULL), "4096");
    CHECK_STR(ev_with("ProblemSize[i]", 0, b, 3, NULL), "2048");
    CHECK_STR(ev_with("ProblemSize[-1] + ProblemSize[i - 1]", 0, b, 3, NULL),
              "6144");
    CHECK_STR(ev_with("ProblemSize", 0, b, 3, NULL), "[4096, 2048]");
    CHECK_STR(ev_with("max(filter_width)", 0, b, 3, NULL), "15");
}

static void test_builtins(void)
{
    EV("range(5)", "[0, 1, 2, 3, 4]");
    EV("range(2, 5)", "[2, 3, 4]");
    EV("range(0, 10, 3)", "[0, 3, 6, 9]");
    EV("range(10, 0, -3)", "[10, 7, 4, 1]");
    EV("range(0)", "[]");
    EV("range(5, 2)", "[]");
    EV("range(2, 5, -1)", "[]");
    EV("range(-3, 0)", "[-3, -2, -1]");
    EV("range(True, 3)", "[1, 2]");
    EV("range(9223372036854775805, 9223372036854775807)",
       "[9223372036854775805, 9223372036854775806]");
    EV("range(-9223372036854775807 - 1, -9223372036854775807 + 1)",
       "[-9223372036854775808, -9223372036854775807]");
    EV("range(9223372036854775807, 9223372036854775800, -9223372036854775807 "
       "- 1)",
       "[9223372036854775807]");
    EV("list(range(3))", "[0, 1, 2]");
    EV("list([1, [2]])", "[1, [2]]");
    EV("list('ab')", "['a', 'b']");
    EV("list()", "[]");
    EV("len([1, 2, 3])", "3");
    EV("len([])", "0");
    EV("len('abcd')", "4");
    EV("len(range(1, 100, 2))", "50");
    EV("max([3, 1, 2])", "3");
    EV("min([3, 1, 2])", "1");
    EV("max(3, 7, 5)", "7");
    EV("min(3, 7, 5)", "3");
    EV("max(1, 2.5)", "2.5");
    EV("min(1, 1.0)", "1");
    EV("max(1.0, 1)", "1.0");
    EV("max([[1, 2], [1, 3]])", "[1, 3]");
    EV("max('a', 'b')", "b");
    EV("max(x * x for x in range(-5, 3))", "25");
    EV("min([x for x in range(4) if x > 1])", "2");
    EV("max(range(1, 11))", "10");
    EV("max([1, 5] + [3])", "5");
    ERR("range(1, 2, 0)", "range() step must not be zero", 1, "range");
    ERR("range(1.5)", "range() arguments must be int, not float", 1, "range");
    ERR("range()", "range() takes 1 to 3 arguments (0 given)", 1, "range");
    ERR("range(1, 2, 3, 4)", "range() takes 1 to 3 arguments (4 given)", 1,
        "range");
    ERR("len(1, 2)", "len() takes exactly one argument (2 given)", 1, "len");
    ERR("len(5)", "object of type int has no len()", 1, "len");
    ERR("list(1, 2)", "list() takes at most 1 argument", 1, "list");
    ERR("list(5)", "int is not iterable", 1, "list");
    ERR("max()", "max() expects at least 1 argument", 1, "max");
    ERR("max([])", "max() arg is an empty list", 1, "max");
    ERR("min(5)", "int is not iterable", 1, "min");
    ERR("max(1, 'a')", "unsupported operand types for >: str and int", 1,
        "max");
    ERR("foo(3)", "unknown function 'foo'", 1, "foo");
    ERR("1 + sum([1])", "unknown function 'sum'", 5, "sum");
    ERR_MAX("range(10**9)", 1000, "range produces more than 1000 values", 1,
            "range");
    ERR_MAX("  range(-9223372036854775807 - 1, 9223372036854775807)", 0,
            "range produces more than 16777216 values", 3, "range");
    ERR_MAX("range(9223372036854775807, -9223372036854775807 - 1, -1)", 0,
            "range produces more than", 1, "range");
    ERR_MAX("range(1000)", 999, "range produces more than 999 values", 1,
            "range");
    CHECK_STR(ev_with("len(range(1000))", 1000, NULL, 0, NULL), "1000");
}

static void test_comprehensions(void)
{
    EV("[2**i for i in range(0, 6)]", "[1, 2, 4, 8, 16, 32]");
    EV("[i for i in range(1, 11)]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
    EV("[i for i in range(1, 10+1)]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
    EV("[a*b for a in range(3) for b in [1,2] if a != b]", "[0, 0, 2, 2]");
    EV("[a + b for a in [10, 20] for b in [1, 2]]", "[11, 12, 21, 22]");
    EV("[x for x in range(10) if x % 2 if x > 4]", "[5, 7, 9]");
    EV("[x for x in range(3) if 0]", "[]");
    EV("[[j for j in range(i)] for i in range(3)]", "[[], [0], [0, 1]]");
    EV("[y for x in [[1, 2], [3]] for y in x]", "[1, 2, 3]");
    EV("[x for x in [1] for x in [5, 6]]", "[5, 6]");
    EV("[c + c for c in 'ab']", "['aa', 'bb']");
    EV("[x for x in [[1], [2]]][1]", "[2]");
    EV("[i for i in []]", "[]");
    EV("[range(2) for i in range(2)]", "[[0, 1], [0, 1]]");
    EV("[ i  for  i  in  range ( 3 ) ]", "[0, 1, 2]");
    EV("[x > 1 and x for x in range(3)]", "[False, False, 2]");
    ERR("[x for x in 5]", "int is not iterable", 13, "5");
    ERR_MAX("[i for i in range(10) for j in range(10)]", 50,
            "list comprehension produces more than 50 values", 1, "[");
    /* Filtered-out iterations still count, so a hostile file cannot loop
     * for hours building nothing. */
    ERR_MAX("[0 for a in range(1000) for b in range(1000) if 0]", 1000,
            "evaluation builds more than 8000 values", 34, "range");
    ERR_MAX("[[0 for a in range(1000)] for b in range(1000)]", 1000,
            "evaluation builds more than", 14, "range");

    /* Comprehension variables shadow free names inside the comprehension
     * only; the first iterable is evaluated outside. */
    binding b[] = {{"x", I(3)}, {"i", I(100)}};
    CHECK_STR(ev_with("[x for x in range(x)]", 0, b, 2, NULL), "[0, 1, 2]");
    CHECK_STR(ev_with("[i + x for i in range(2)] + [i]", 0, b, 2, NULL),
              "[3, 4, 100]");
}

static void test_free_names(void)
{
    cutune__expr_error err;
    cutune__expr *e =
        cutune__expr_parse("b + a * b + c[0] + max(a) + len(c) + a", 0, &err);
    CHECK(e != NULL);
    CHECK_INT(cutune__expr_name_count(e), 3);
    CHECK_STR(cutune__expr_name(e, 0), "b");
    CHECK_STR(cutune__expr_name(e, 1), "a");
    CHECK_STR(cutune__expr_name(e, 2), "c");
    CHECK(cutune__expr_name(e, 3) == NULL);
    CHECK_STR(cutune__expr_text(e), "b + a * b + c[0] + max(a) + len(c) + a");
    cutune__expr_free(e);

    /* Text order, comprehension variables excluded. */
    e = cutune__expr_parse("[i * n for i in range(m) for j in i if j != k]", 0,
                           &err);
    CHECK(e != NULL);
    CHECK_INT(cutune__expr_name_count(e), 3);
    CHECK_STR(cutune__expr_name(e, 0), "n");
    CHECK_STR(cutune__expr_name(e, 1), "m");
    CHECK_STR(cutune__expr_name(e, 2), "k");
    cutune__expr_free(e);

    /* `x` names the comprehension variable and, in the first iterable, a
     * free name; `y` outside the comprehension is free too. */
    e = cutune__expr_parse("[x for x in x] + [y] + [y for y in [1]]", 0, &err);
    CHECK(e != NULL);
    CHECK_INT(cutune__expr_name_count(e), 2);
    CHECK_STR(cutune__expr_name(e, 0), "x");
    CHECK_STR(cutune__expr_name(e, 1), "y");
    cutune__expr_free(e);

    e = cutune__expr_parse("[1, 2, 3]", 0, &err);
    CHECK_INT(cutune__expr_name_count(e), 0);
    cutune__expr_free(e);

    /* Unknown names are not a parse error: the caller decides. */
    e = cutune__expr_parse("undefined_thing + 1", 0, &err);
    CHECK(e != NULL);
    CHECK_INT(cutune__expr_name_count(e), 1);
    CHECK_STR(cutune__expr_name(e, 0), "undefined_thing");
    cutune__value v;
    CHECK_INT(cutune__expr_eval(e, NULL, &v, &err), -1);
    CHECK_CONTAINS(err.message, "no value bound to name 'undefined_thing'");
    cutune__value one = I(41);
    CHECK_INT(cutune__expr_eval(e, &one, &v, &err), 0);
    CHECK_INT(v.type, CUTUNE__V_INT);
    CHECK_INT(v.u.i, 42);
    cutune__expr_free(e);

    CHECK_INT(cutune__expr_eval_const("1 + x", &v, &err), -1);
    CHECK_STR(err.message, "name 'x' is not defined");
    CHECK_INT(err.column, 5);
    CHECK_STR(err.token, "x");
    cutune__expr_free(NULL);
    CHECK_INT(cutune__expr_name_count(NULL), 0);
}

static void test_syntax_errors(void)
{
    ERR("1 +* 2", "unexpected token", 4, "*");
    ERR("1 + ", "unexpected end of expression", 5, "");
    ERR("", "empty expression", 1, "");
    ERR("   ", "empty expression", 1, "");
    ERR("(1 + 2", "'(' was never closed", 1, "(");
    ERR("[1, (2]", "unexpected token", 7, "]");
    ERR("  [1, 2", "'[' was never closed", 3, "[");
    ERR("max(1, 2", "'(' was never closed", 4, "(");
    ERR("1 + 2)", "unmatched ')'", 6, ")");
    ERR("1]", "unmatched ']'", 2, "]");
    ERR("1 2", "unexpected token", 3, "2");
    ERR("'abc", "unterminated string", 1, "'");
    ERR("1 $ 2", "unexpected character", 3, "$");
    ERR("a = 1", "unexpected character", 3, "=");
    ERR("'\xc3\xa9' +* 1", "unexpected token", 6, "*");
    ERR("x is None", "unexpected token", 3, "is");
    ERR("lambda: 1", "unsupported keyword 'lambda'", 1, "lambda");
    ERR("12abc", "invalid number", 1, "12abc");
    ERR("0x", "invalid number", 1, "0x");
    ERR("0b12", "invalid number", 1, "0b12");
    ERR("012", "leading zeros", 1, "012");
    ERR("(1, 2)", "tuples are not supported", 3, ",");
    ERR("()", "tuples are not supported", 1, "()");
    ERR("1 if 2", "unexpected end of expression", 7, "");
    ERR("[x for x in]", "unexpected token", 12, "]");
    ERR("[x for 1 in y]", "unexpected token", 8, "1");
    ERR("[x for x y]", "unexpected token", 10, "y");
    ERR("(1)(2)", "unexpected token", 4, "(");
    ERR("not", "unexpected end of expression", 4, "");
    ERR("1 not 2", "unexpected token", 3, "not");
    ERR("[1 2]", "unexpected token", 4, "2");
}

static void test_limits(void)
{
    char buf[4096];
    /* Deep nesting is an error, not a stack overflow. */
    size_t k = 0;
    for (int i = 0; i < 300; i++)
        buf[k++] = '(';
    buf[k++] = '1';
    for (int i = 0; i < 300; i++)
        buf[k++] = ')';
    buf[k] = '\0';
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");
    k = 0;
    for (int i = 0; i < 150; i++)
        buf[k++] = '(';
    buf[k++] = '1';
    for (int i = 0; i < 150; i++)
        buf[k++] = ')';
    buf[k] = '\0';
    EV(buf, "1");
    memset(buf, '[', 1000);
    buf[1000] = '\0';
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");
    memset(buf, '-', 1000);
    strcpy(buf + 1000, "1");
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");
    k = 0;
    for (int i = 0; i < 300; i++) {
        memcpy(buf + k, "not ", 4);
        k += 4;
    }
    strcpy(buf + k, "1");
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");
    k = 0;
    for (int i = 0; i < 300; i++) {
        memcpy(buf + k, "2**", 3);
        k += 3;
    }
    strcpy(buf + k, "1");
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");
    strcpy(buf, "[[1]]");
    k = strlen(buf);
    for (int i = 0; i < 300; i++) {
        memcpy(buf + k, "[0]", 3);
        k += 3;
    }
    buf[k] = '\0';
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");
    strcpy(buf, "[1");
    k = strlen(buf);
    for (int i = 0; i < 300; i++) {
        memcpy(buf + k, " for a in [1]", 13);
        k += 13;
    }
    strcpy(buf + k, "]");
    CHECK_CONTAINS(ev(buf), "expression nested too deeply");

    /* Long flat chains cost no depth. */
    char *big = malloc(40000);
    k = 0;
    big[k++] = '1';
    for (int i = 0; i < 5000; i++) {
        memcpy(big + k, "+1", 2);
        k += 2;
    }
    big[k] = '\0';
    EV(big, "5001");
    k = 0;
    big[k++] = '[';
    for (int i = 0; i < 3000; i++)
        k += (size_t)sprintf(big + k, "%d,", i);
    strcpy(big + k, "][2999]");
    EV(big, "2999");
    k = 0;
    for (int i = 0; i < 2000; i++) {
        memcpy(big + k, "1 and ", 6);
        k += 6;
    }
    strcpy(big + k, "7");
    EV(big, "7");
    k = 0;
    for (int i = 0; i < 2000; i++) {
        memcpy(big + k, "[1] + ", 6);
        k += 6;
    }
    strcpy(big + k, "[2]");
    const char *r = ev_with(big, 0, NULL, 0, NULL);
    CHECK_INT(strlen(r), 1 + 2000 * 3 + 2);
    CHECK_STR(r + strlen(r) - 8, "1, 1, 2]");
    free(big);

    ERR_MAX("[1, 2] + [3]", 2,
            "list concatenation produces more than 2 values", 8, "+");
}

/* Every expression of the T1 files in tests/data/t1, with bindings. */
static void test_t1_files(void)
{
    /* Values. */
    EV("[16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, "
       "240, 256]",
       "[16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, "
       "240, 256]");
    EV("[1, 2, 4, 8, 16]", "[1, 2, 4, 8, 16]");
    EV("[0, 1]", "[0, 1]");
    EV("[15]", "[15]");
    EV("[2**i for i in range(0, 6)]", "[1, 2, 4, 8, 16, 32]");
    EV("[i for i in range(1, 11)]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
    EV("[i for i in range(1, 10+1)]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
    cutune__value v;
    cutune__expr_error err;
    CHECK_INT(cutune__expr_eval_const(
                  "[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", &v, &err),
              0);
    CHECK_INT(v.type, CUTUNE__V_LIST);
    CHECK_INT(v.u.list.n, 37);
    CHECK_INT(v.u.list.items[4].u.i, 16);
    CHECK_INT(v.u.list.items[5].u.i, 32);
    CHECK_INT(v.u.list.items[36].u.i, 1024);
    cutune__value_clear(&v);
    CHECK_INT(v.type, CUTUNE__V_NONE);

    /* convolution_milo */
    binding conv[] = {
        {"use_padding", I(1)},   {"block_size_x", I(32)},
        {"block_size_y", I(8)},  {"use_shmem", I(1)},
        {"tile_size_x", I(1)},   {"tile_size_y", I(2)},
        {"filter_width", I(15)}, {"filter_height", I(15)},
    };
    const size_t nconv = sizeof conv / sizeof conv[0];
    CHECK_STR(ev_with("use_padding==0 or block_size_x % 32 != 0", 0, conv,
                      nconv, NULL),
              "False");
    conv[1].value = I(48);
    CHECK_STR(ev_with("use_padding==0 or block_size_x % 32 != 0", 0, conv,
                      nconv, NULL),
              "True");
    CHECK_STR(ev_with("block_size_x*block_size_y<=1024", 0, conv, nconv, NULL),
              "True");
    conv[2].value = I(32);
    CHECK_STR(ev_with("block_size_x*block_size_y<=1024", 0, conv, nconv, NULL),
              "False");
    CHECK_STR(
        ev_with("use_padding==0 or use_shmem != 0", 0, conv, nconv, NULL),
        "True");
    const char *cond3 =
        "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*"
        "((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024";
    conv[1].value = I(16);
    conv[2].value = I(8);
    CHECK_STR(ev_with(cond3, 0, conv, nconv, NULL), "True"); /* 30*30 */
    conv[1].value = I(128);
    CHECK_STR(ev_with(cond3, 0, conv, nconv, NULL), "True"); /* 142*30 */
    conv[1].value = I(256);
    conv[2].value = I(32);
    CHECK_STR(ev_with(cond3, 0, conv, nconv, NULL), "False"); /* 270*78 */
    conv[3].value = I(0);
    CHECK_STR(ev_with(cond3, 0, conv, nconv, NULL), "True");
    conv[1].value = I(48);
    conv[4].value = I(3);
    CHECK_STR(ev_with("(262144 // block_size_x) // tile_size_x", 0, conv,
                      nconv, NULL),
              "1820");
    CHECK_STR(ev_with("(262144 // block_size_y) // tile_size_y", 0, conv,
                      nconv, NULL),
              "4096");
    CHECK_STR(ev_with("block_size_x", 0, conv, nconv, NULL), "48");
    EV("1", "1");

    /* Argument sizes, where parameters are bound to their value lists. */
    cutune__value ps[] = {I(4096), I(4096)};
    cutune__value fw[] = {I(15)};
    cutune__value fh[] = {I(3), I(15), I(7)};
    binding sizes[] = {{"ProblemSize", L(ps, 2)},
                       {"filter_width", L(fw, 1)},
                       {"filter_height", L(fh, 3)}};
    CHECK_STR(ev_with("ProblemSize[0]*ProblemSize[1]", 0, sizes, 3, NULL),
              "16777216");
    CHECK_STR(ev_with("(ProblemSize[0]+max(filter_width)-1) * "
                      "(ProblemSize[1]+max(filter_height)-1)",
                      0, sizes, 3, NULL),
              "16892100");
    CHECK_STR(
        ev_with("max(filter_height) * max(filter_width)", 0, sizes, 3, NULL),
        "225");

    /* dedispersion_milo */
    binding dd[] = {{"block_size_x", I(4)}, {"block_size_y", I(8)},
                    {"tile_size_x", I(1)},  {"tile_stride_x", I(0)},
                    {"tile_size_y", I(1)},  {"tile_stride_y", I(1)}};
    CHECK_STR(
        ev_with("32 <= block_size_x * block_size_y <= 1024", 0, dd, 6, NULL),
        "True");
    dd[0].value = I(2);
    CHECK_STR(
        ev_with("32 <= block_size_x * block_size_y <= 1024", 0, dd, 6, NULL),
        "False");
    CHECK_STR(ev_with("tile_size_x > 1 or tile_stride_x == 0", 0, dd, 6, NULL),
              "True");
    CHECK_STR(ev_with("tile_size_y > 1 or tile_stride_y == 0", 0, dd, 6, NULL),
              "False");
    CHECK_STR(ev_with("ProblemSize[0]*ProblemSize[1]", 0, sizes, 3, NULL),
              "16777216");

    /* gemm_milo */
    binding gemm[] = {{"KWG", I(32)},   {"KWI", I(8)},    {"MWG", I(64)},
                      {"NWG", I(128)},  {"MDIMC", I(16)}, {"NDIMC", I(8)},
                      {"MDIMA", I(32)}, {"NDIMB", I(16)}, {"VWM", I(2)},
                      {"VWN", I(4)}};
    const size_t ngemm = sizeof gemm / sizeof gemm[0];
    CHECK_STR(ev_with("KWG % KWI == 0", 0, gemm, ngemm, NULL), "True");
    CHECK_STR(ev_with("MWG % (MDIMC * VWM) == 0", 0, gemm, ngemm, NULL),
              "True");
    CHECK_STR(ev_with("NWG % (NDIMC * VWN) == 0", 0, gemm, ngemm, NULL),
              "True");
    CHECK_STR(ev_with("MWG % (MDIMA * VWM) == 0", 0, gemm, ngemm, NULL),
              "True");
    CHECK_STR(ev_with("NWG % (NDIMB * VWN) == 0", 0, gemm, ngemm, NULL),
              "True");
    /* True division: 128/32 == 4.0, and 32 % 4.0 == 0.0 == 0. */
    CHECK_STR(
        ev_with("KWG % ((MDIMC * NDIMC)/MDIMA) == 0", 0, gemm, ngemm, NULL),
        "True");
    CHECK_STR(ev_with("KWG % ((MDIMC * NDIMC)/MDIMA)", 0, gemm, ngemm, NULL),
              "0.0");
    CHECK_STR(
        ev_with("KWG % ((MDIMC * NDIMC)/NDIMB) == 0", 0, gemm, ngemm, NULL),
        "True");
    gemm[0].value = I(16);
    gemm[4].value = I(32);
    gemm[5].value = I(32);
    gemm[6].value = I(8);
    CHECK_STR(
        ev_with("KWG % ((MDIMC * NDIMC)/MDIMA) == 0", 0, gemm, ngemm, NULL),
        "False");
    const char *not128 =
        "not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)";
    CHECK_STR(ev_with(not128, 0, gemm, ngemm, NULL), "True");
    gemm[2].value = I(128);
    gemm[4].value = I(8);
    gemm[5].value = I(8);
    CHECK_STR(ev_with(not128, 0, gemm, ngemm, NULL), "False");
    EV("4096", "4096");

    /* hotspot_milo */
    binding hs[] = {{"block_size_x", I(32)},
                    {"block_size_y", I(4)},
                    {"tile_size_x", I(2)},
                    {"tile_size_y", I(2)},
                    {"temporal_tiling_factor", I(3)},
                    {"loop_unroll_factor_t", I(2)},
                    {"sh_power", I(1)}};
    CHECK_STR(ev_with("block_size_x*block_size_y>= 32", 0, hs, 7, NULL),
              "True");
    CHECK_STR(ev_with("temporal_tiling_factor % loop_unroll_factor_t == 0", 0,
                      hs, 7, NULL),
              "False");
    CHECK_STR(ev_with("block_size_x*block_size_y <= 1024", 0, hs, 7, NULL),
              "True");
    const char *hs3 = "(block_size_x*tile_size_x+ temporal_tiling_factor * 2) "
                      "* (block_size_y*tile_size_y+ temporal_tiling_factor * "
                      "2) * (2+sh_power) * 4 <= 49152";
    CHECK_STR(ev_with(hs3, 0, hs, 7, NULL), "True"); /* 70*14*3*4 = 11760 */
    hs[0].value = I(256);
    CHECK_STR(ev_with(hs3, 0, hs, 7, NULL), "False");
}

static void test_eval_reuse(void)
{
    /* One parse, many evaluations, as the search space does. */
    cutune__expr_error err;
    cutune__expr *e =
        cutune__expr_parse("block_size_x*block_size_y<=1024", 0, &err);
    CHECK(e != NULL);
    int count = 0;
    for (int x = 1; x <= 64; x++) {
        for (int y = 1; y <= 64; y++) {
            cutune__value vars[2] = {I(x * 16), I(y)};
            cutune__value out;
            if (cutune__expr_eval(e, vars, &out, &err) == 0 &&
                cutune__value_truthy(&out))
                count++;
            cutune__value_clear(&out);
        }
    }
    int want = 0;
    for (int x = 1; x <= 64; x++)
        for (int y = 1; y <= 64; y++)
            want += x * 16 * y <= 1024;
    CHECK_INT(count, want);
    cutune__expr_free(e);

    /* The tree is not changed by evaluating: literals stay intact when a
     * result borrows or indexes them. */
    e = cutune__expr_parse("[[1, 2], 'x'][0] + [3]", 0, &err);
    for (int i = 0; i < 3; i++) {
        cutune__value out;
        CHECK_INT(cutune__expr_eval(e, NULL, &out, &err), 0);
        CHECK_STR(show(0, &out, &err), "[1, 2, 3]");
    }
    cutune__expr_free(e);
}

static void test_values(void)
{
    cutune__value v;
    v.type = CUTUNE__V_FLOAT;
    struct {
        double d;
        const char *text;
    } floats[] = {
        {0.5, "0.5"},
        {1e-5, "1e-05"},
        {0.0001, "0.0001"},
        {1.0, "1.0"},
        {-2.0, "-2.0"},
        {100.0, "100.0"},
        {1e15, "1000000000000000.0"},
        {1e16, "1e+16"},
        {1e22, "1e+22"},
        {1.5e-7, "1.5e-07"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {0.1, "0.1"},
        {1.0 / 3.0, "0.3333333333333333"},
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {INFINITY, "inf"},
        {NAN, "nan"},
    };
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        v.u.f = floats[i].d;
        char *t = cutune__value_to_text(&v);
        CHECK_STR(t, floats[i].text);
        free(t);
    }
    EV("-7", "-7");
    EV("-9223372036854775807 - 1", "-9223372036854775808");
    EV("['a', \"it's\", 'q\"\\'', 'tab\\t']",
       "['a', \"it's\", 'q\"\\'', 'tab\\t']");
    EV("['back\\\\slash']", "['back\\\\slash']");
    EV("[[[]]]", "[[[]]]");

    cutune__value a, b, c;
    cutune__expr_error err;
    CHECK_INT(cutune__expr_eval_const("[1, 'x', [2.0, True]]", &a, &err), 0);
    CHECK_INT(cutune__value_copy(&b, &a), 0);
    CHECK(cutune__value_equal(&a, &b));
    CHECK(b.u.list.items[1].u.s != a.u.list.items[1].u.s);
    CHECK(b.u.list.items[2].u.list.items != a.u.list.items[2].u.list.items);
    CHECK_INT(cutune__expr_eval_const("[1.0, 'x', [2, 1]]", &c, &err), 0);
    CHECK(cutune__value_equal(&a, &c));
    cutune__value_clear(&c);
    CHECK_INT(cutune__expr_eval_const("[1.0, 'y', [2, 1]]", &c, &err), 0);
    CHECK(!cutune__value_equal(&a, &c));
    cutune__value_clear(&a);
    cutune__value_clear(&b);
    cutune__value_clear(&c);
    cutune__value_clear(NULL);

    cutune__value one = I(1), t, f, none;
    t.type = CUTUNE__V_BOOL;
    t.u.i = 1;
    f.type = CUTUNE__V_FLOAT;
    f.u.f = 1.0;
    none.type = CUTUNE__V_NONE;
    CHECK(cutune__value_equal(&one, &t));
    CHECK(cutune__value_equal(&one, &f));
    CHECK(cutune__value_equal(&t, &f));
    CHECK(cutune__value_equal(&none, &none));
    CHECK(!cutune__value_equal(&none, &one));
    f.u.f = NAN;
    CHECK(!cutune__value_equal(&f, &f));
    CHECK(cutune__value_truthy(&f));
    f.u.f = 0.0;
    CHECK(!cutune__value_truthy(&f));
    CHECK(!cutune__value_truthy(&none));
    CHECK(cutune__value_truthy(&one));
    cutune__value empty = L(NULL, 0);
    CHECK(!cutune__value_truthy(&empty));
    char *txt = cutune__value_to_text(&empty);
    CHECK_STR(txt, "[]");
    free(txt);
    txt = cutune__value_to_text(&t);
    CHECK_STR(txt, "True");
    free(txt);
}

static void test_errors_struct(void)
{
    /* err may be NULL. */
    cutune__value v;
    CHECK(cutune__expr_parse("1 +", 0, NULL) == NULL);
    CHECK_INT(cutune__expr_eval_const("1/0", &v, NULL), -1);
    CHECK_INT(v.type, CUTUNE__V_NONE);

    cutune__expr_error err;
    ERR("1/0", "division by zero", 2, "/");
    ERR("1 // 0", "division by zero", 3, "//");
    ERR("5 % 0", "modulo by zero", 3, "%");
    ERR("1.0 / 0", "division by zero", 5, "/");
    ERR("1.5 % 0.0", "modulo by zero", 5, "%");
    ERR("0 ** -1", "0 cannot be raised to a negative power", 3, "**");
    ERR("0.0 ** -1", "cannot be raised to a negative power", 5, "**");
    ERR("(-8) ** 0.5", "fractional power", 6, "**");
    ERR("[1] + 1", "unsupported operand types for +: list and int", 5, "+");
    ERR("'a' * 'b'", "unsupported operand types for *: str and str", 5, "*");
    ERR("[1] * 2.0", "unsupported operand types for *: list and float", 5,
        "*");
    ERR_MAX("[1, 2] * 6", 10, "repetition produces more than 10 values", 8,
            "*");
    ERR_MAX("'ab' * 6", 10, "repetition produces more than 10 values", 6, "*");
    ERR_MAX("[0] * 9223372036854775807", 0, "repetition produces more than", 5,
            "*");
    ERR("[1] - [1]", "unsupported operand types for -: list and list", 5, "-");
    ERR("-[1]", "bad operand type for unary -: list", 1, "-");
    ERR("+'a'", "bad operand type for unary +: str", 1, "+");
    ERR("None + 1", "unsupported operand types for +: NoneType and int", 6,
        "+");

    /* The token is truncated to fit; the column still points at it. */
    char name[200];
    memset(name, 'f', 150);
    strcpy(name + 150, "(1)");
    CHECK(cutune__expr_parse(name, 0, &err) == NULL);
    CHECK_INT(err.column, 1);
    CHECK_INT(strlen(err.token), sizeof err.token - 1);
    CHECK_CONTAINS(err.message, "unknown function 'fff");
}

/* ---- compiled programs against the tree evaluator ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t pick(size_t n)
{
    return (size_t)(rnd() % n);
}

typedef struct gen_buf {
    char s[8192];
    size_t n;
} gen_buf;

static void put(gen_buf *g, const char *t)
{
    size_t k = strlen(t);
    if (g->n + k < sizeof g->s) {
        memcpy(g->s + g->n, t, k + 1);
        g->n += k;
    }
}

/* A random expression over int variables a, b, c, a bool t, floats x, y,
 * constants K (int), PS (a list) and S (a string), with every operator
 * programs compile and some they do not. */
static void gen_expr(gen_buf *g, int depth)
{
    static const char *const atoms[] = {"a",
                                        "b",
                                        "c",
                                        "t",
                                        "x",
                                        "y",
                                        "a",
                                        "b",
                                        "x",
                                        "K",
                                        "PS[0]",
                                        "PS[2]",
                                        "len(PS)",
                                        "0",
                                        "1",
                                        "2",
                                        "3",
                                        "7",
                                        "10",
                                        "32",
                                        "1024",
                                        "-1",
                                        "-3",
                                        "9223372036854775807",
                                        "(-9223372036854775807 - 1)",
                                        "4611686018427387904",
                                        "3037000500",
                                        "0.0",
                                        "-0.0",
                                        "0.5",
                                        "2.5",
                                        "1e308",
                                        "3.0",
                                        "1e-3",
                                        "True",
                                        "False",
                                        "max(PS)",
                                        "(1 / 3)"};
    static const char *const arith[] = {" + ",  " - ", " * ", " / ",
                                        " // ", " % ", " ** "};
    static const char *const cmps[] = {" == ", " != ", " < ",
                                       " <= ", " > ",  " >= "};
    static const char *const lists[] = {"[1, 2.0, 4, True]",
                                        "PS",
                                        "[]",
                                        "[0, 8, 0.5, 'ca', [1]]",
                                        "[-1]",
                                        "list(range(0, 9, 2))",
                                        "[2 ** i for i in range(4)]",
                                        "[1, 2] + [2.5, K]",
                                        "range(3000)"};
    size_t form = depth <= 0 ? 0 : pick(14);
    switch (form) {
    case 0:
    case 1: put(g, atoms[pick(sizeof atoms / sizeof *atoms)]); break;
    case 2:
    case 3: {
        size_t terms = 2 + pick(2);
        put(g, "(");
        for (size_t i = 0; i < terms; i++) {
            if (i)
                put(g, arith[pick(7)]);
            gen_expr(g, depth - 1);
        }
        put(g, ")");
        break;
    }
    case 4:
        put(g, (const char *[]){"-", "+", "not "}[pick(3)]);
        gen_expr(g, depth - 1);
        break;
    case 5:
    case 6: {
        size_t terms = 2 + pick(2);
        put(g, "(");
        for (size_t i = 0; i < terms; i++) {
            if (i)
                put(g, cmps[pick(6)]);
            gen_expr(g, depth - 1);
        }
        put(g, ")");
        break;
    }
    case 7: {
        const char *op = pick(2) ? " and " : " or ";
        size_t terms = 2 + pick(2);
        put(g, "(");
        for (size_t i = 0; i < terms; i++) {
            if (i)
                put(g, op);
            gen_expr(g, depth - 1);
        }
        put(g, ")");
        break;
    }
    case 8:
        put(g, "(");
        gen_expr(g, depth - 1);
        put(g, " if ");
        if (pick(4) == 0)
            put(g, (const char *[]){"PS", "[]", "S", "''"}[pick(4)]);
        else
            gen_expr(g, depth - 1);
        put(g, " else ");
        gen_expr(g, depth - 1);
        put(g, ")");
        break;
    case 9: {
        size_t args = 2 + pick(2);
        put(g, pick(2) ? "max(" : "min(");
        for (size_t i = 0; i < args; i++) {
            if (i)
                put(g, ", ");
            gen_expr(g, depth - 1);
        }
        put(g, ")");
        break;
    }
    case 10:
        put(g, "(");
        gen_expr(g, depth - 1);
        put(g, pick(2) ? " in " : " not in ");
        put(g, lists[pick(sizeof lists / sizeof *lists)]);
        put(g, ")");
        break;
    case 11:
        /* Mostly outside what programs compile. */
        put(g,
            (const char *[]){"(S == 'ca')", "(S if a else b)", "[a, b][0]",
                             "len([a])", "(a in S)", "max([a, b])", "(x < S)",
                             "[a * i for i in range(3)][1]"}[pick(8)]);
        break;
    default:
        /* The shape of the T1 conditions. */
        put(g, "(");
        gen_expr(g, depth - 1);
        put(g, (const char *[]){" % ", " // ", " * "}[pick(3)]);
        gen_expr(g, depth - 1);
        put(g, (const char *[]){" == 0", " <= 1024", " >= 32"}[pick(3)]);
        put(g, ")");
        break;
    }
}

static cutune__value F(double f)
{
    cutune__value v;
    v.type = CUTUNE__V_FLOAT;
    v.u.f = f;
    return v;
}

static cutune__value B(int b)
{
    cutune__value v;
    v.type = CUTUNE__V_BOOL;
    v.u.i = b != 0;
    return v;
}

static int64_t random_int(void)
{
    static const int64_t pool[] = {0,
                                   1,
                                   -1,
                                   2,
                                   -2,
                                   3,
                                   -3,
                                   7,
                                   32,
                                   1024,
                                   4096,
                                   62,
                                   63,
                                   64,
                                   INT64_MAX,
                                   INT64_MIN,
                                   INT64_MAX - 1,
                                   INT64_MIN + 1,
                                   (int64_t)1 << 31,
                                   -((int64_t)1 << 32),
                                   3037000499,
                                   3037000500,
                                   -3037000500,
                                   (int64_t)1 << 53,
                                   ((int64_t)1 << 53) + 1};
    if (pick(2))
        return (int64_t)pick(41) - 20;
    return pool[pick(sizeof pool / sizeof *pool)];
}

static double random_float(void)
{
    static const double pool[] = {0.0,    -0.0,
                                  0.5,    -2.5,
                                  3.0,    2.0,
                                  1e308,  -1e308,
                                  1e-300, 0x1p53 + 2,
                                  0x1p63, -0x1p63,
                                  0x1p62, 9007199254740993.0,
                                  1024.0, 32.0};
    size_t k = pick(4);
    if (k == 0)
        return pool[pick(sizeof pool / sizeof *pool)];
    if (k == 1)
        return (double)((int)pick(81) - 40) / 4.0;
    if (k == 2)
        return pick(3) == 0 ? NAN : pick(2) ? INFINITY : -INFINITY;
    return (double)((int)pick(41) - 20);
}

/* Python's result, as the tree evaluator gives it, and the program's must
 * be the same value of the same type. */
static int same_value(const cutune__value *a, const cutune__value *b)
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

/* Random expressions, each compiled for its value and for its truth and
 * run on random variables (edge values included: 0, the int64 limits,
 * NaN, infinities, -0.0) against cutune__expr_eval. Wherever the tree
 * evaluator fails the program must be undecided; wherever the program
 * decides it must give the tree evaluator's value, type included, or its
 * truth. Only int ** int with a negative exponent may leave a program
 * undecided where the tree evaluator succeeds. */
static void test_programs_match_tree(void)
{
    enum { EXPRS = 6000, DRAWS = 40 };
    cutune__value ps_items[3] = {I(4096), I(7), F(2.5)};
    cutune__value ps = L(ps_items, 3);
    cutune__value k_value = I(5);
    cutune__value s_value;
    s_value.type = CUTUNE__V_STR;
    s_value.u.s = (char *)"ca";
    size_t compiled_value = 0, compiled_truth = 0, parsed = 0;
    size_t decided = 0, tree_failed = 0, undecided_ok = 0, mismatches = 0;
    rng_state = 12345;
    for (int k = 0; k < EXPRS; k++) {
        gen_buf g;
        g.n = 0;
        g.s[0] = '\0';
        gen_expr(&g, 1 + (int)pick(4));
        cutune__expr_error err;
        cutune__expr *e = cutune__expr_parse(g.s, 0, &err);
        if (!e)
            continue;
        parsed++;
        size_t nn = cutune__expr_name_count(e);
        cutune__vtype types[16];
        const cutune__value *consts[16];
        char kinds[16];
        for (size_t i = 0; i < nn && i < 16; i++) {
            const char *name = cutune__expr_name(e, i);
            consts[i] = NULL;
            types[i] = CUTUNE__V_NONE;
            kinds[i] = name[0];
            if (strcmp(name, "PS") == 0)
                consts[i] = &ps;
            else if (strcmp(name, "K") == 0)
                consts[i] = &k_value;
            else if (strcmp(name, "S") == 0)
                consts[i] = &s_value;
            else if (name[0] == 't')
                types[i] = CUTUNE__V_BOOL;
            else if (name[0] == 'x' || name[0] == 'y')
                types[i] = CUTUNE__V_FLOAT;
            else
                types[i] = CUTUNE__V_INT;
        }
        cutune__expr_prog *pv =
            cutune__expr_compile(e, types, consts, CUTUNE__PROG_VALUE);
        cutune__expr_prog *pt =
            cutune__expr_compile(e, types, consts, CUTUNE__PROG_TRUTH);
        compiled_value += pv != NULL;
        compiled_truth += pt != NULL;
        /* Whatever compiles for its value compiles for its truth. */
        if (pv && !pt) {
            fprintf(stderr, "value but not truth: %s\n", g.s);
            mismatches++;
        }
        cutune__slot sv[256], st[256];
        int fits = (!pv || cutune__expr_prog_slot_count(pv) <= 256) &&
                   (!pt || cutune__expr_prog_slot_count(pt) <= 256);
        CHECK(fits);
        if (!fits || (!pv && !pt)) {
            cutune__expr_prog_free(pv);
            cutune__expr_prog_free(pt);
            cutune__expr_free(e);
            continue;
        }
        cutune__expr_prog_init_slots(pv, sv);
        cutune__expr_prog_init_slots(pt, st);
        for (int d = 0; d < DRAWS; d++) {
            cutune__value vars[16];
            for (size_t i = 0; i < nn && i < 16; i++) {
                if (consts[i]) {
                    vars[i] = *consts[i];
                    continue;
                }
                if (kinds[i] == 't')
                    vars[i] = B((int)pick(2));
                else if (types[i] == CUTUNE__V_FLOAT)
                    vars[i] = F(random_float());
                else
                    vars[i] = I(random_int());
                if (vars[i].type == CUTUNE__V_FLOAT)
                    sv[i].f = st[i].f = vars[i].u.f;
                else
                    sv[i].i = st[i].i = vars[i].u.i;
            }
            cutune__value want, got;
            int rc = cutune__expr_eval(e, vars, &want, &err);
            if (rc != 0)
                tree_failed++;
            if (pv) {
                int prc = cutune__expr_prog_eval(pv, sv, &got);
                if (prc == 0) {
                    decided++;
                    if (rc != 0 || !same_value(&want, &got)) {
                        char *w = rc ? NULL : cutune__value_to_text(&want);
                        char *h = cutune__value_to_text(&got);
                        fprintf(stderr, "value of %s: tree %s, program %s\n",
                                g.s, w ? w : err.message, h ? h : "?");
                        free(w);
                        free(h);
                        mismatches++;
                    }
                } else if (rc == 0 && !strstr(g.s, "**")) {
                    fprintf(stderr, "undecided value of %s\n", g.s);
                    undecided_ok++;
                }
            }
            if (pt) {
                int tr = cutune__expr_prog_truth(pt, st);
                if (tr >= 0 &&
                    (rc != 0 || tr != cutune__value_truthy(&want))) {
                    fprintf(stderr, "truth of %s: tree %s, program %d\n", g.s,
                            rc ? err.message : "value", tr);
                    mismatches++;
                }
                if (tr < 0 && rc == 0 && !strstr(g.s, "**")) {
                    fprintf(stderr, "undecided truth of %s\n", g.s);
                    undecided_ok++;
                }
            }
            if (rc == 0)
                cutune__value_clear(&want);
        }
        cutune__expr_prog_free(pv);
        cutune__expr_prog_free(pt);
        cutune__expr_free(e);
    }
    CHECK_INT(mismatches, 0);
    /* The generator mostly writes what programs cover, and the draws
     * exercise both outcomes. */
    CHECK(parsed > EXPRS * 9 / 10);
    CHECK(compiled_truth > parsed / 2);
    CHECK(compiled_value > parsed * 2 / 5);
    CHECK_INT(undecided_ok, 0);
    CHECK(decided > 10000);
    CHECK(tree_failed > 1000);
    printf("programs: %zu expressions, %zu compiled for value, %zu for "
           "truth; %zu values decided, %zu tree failures\n",
           parsed, compiled_value, compiled_truth, decided, tree_failed);
}

int main(void)
{
    test_literals();
    test_arithmetic();
    test_overflow();
    test_comparisons();
    test_logic();
    test_index();
    test_builtins();
    test_comprehensions();
    test_free_names();
    test_syntax_errors();
    test_limits();
    test_t1_files();
    test_eval_reuse();
    test_values();
    test_errors_struct();
    test_programs_match_tree();
    return check_finish();
}
