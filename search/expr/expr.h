/* The T1 expression language: the subset of Python that T1 files use for
 * parameter values, conditions, sizes and geometry.
 *
 * Parse once, evaluate many times. A parsed expression lists the free names
 * it reads (parameters, `ProblemSize`, ...) in order of first appearance;
 * the caller binds each to a value by position when evaluating. Builtins
 * (range, list, max, min, len) and comprehension variables are not free.
 *
 * No global state: all functions are thread-safe on distinct objects, and
 * cutune__expr_eval() is safe on one shared parsed expression.
 */
#ifndef CUTUNE_SEARCH_EXPR_H
#define CUTUNE_SEARCH_EXPR_H

#include <stddef.h>
#include <stdint.h>

typedef enum cutune__vtype {
    CUTUNE__V_NONE = 0,
    CUTUNE__V_INT,
    CUTUNE__V_FLOAT,
    CUTUNE__V_BOOL,
    CUTUNE__V_STR,
    CUTUNE__V_LIST
} cutune__vtype;

/* A value owns its string and list storage; free with cutune__value_clear. */
typedef struct cutune__value {
    cutune__vtype type;
    union {
        int64_t i; /* INT, and BOOL (0 or 1) */
        double f;  /* FLOAT */
        char *s;   /* STR, NUL-terminated, owned */
        struct {
            struct cutune__value *items; /* owned */
            size_t n;
        } list;
    } u;
} cutune__value;

void cutune__value_clear(cutune__value *v);
/* Deep copy; returns 0 on success, -1 when memory ran out. */
int cutune__value_copy(cutune__value *dst, const cutune__value *src);
/* Python truthiness. */
int cutune__value_truthy(const cutune__value *v);
/* Python-like text: 128, 0.5, True, abc (strings unquoted), [1, 2]. The
 * result is malloc'ed and owned by the caller; NULL when memory ran out. */
char *cutune__value_to_text(const cutune__value *v);
/* Python ==. */
int cutune__value_equal(const cutune__value *a, const cutune__value *b);

typedef struct cutune__expr cutune__expr;

/* Where and why parsing or evaluation failed. `column` is 1-based in the
 * expression text (0 when not applicable); `token` is the offending token
 * or name. The caller adds the file and the JSON field. */
typedef struct cutune__expr_error {
    int column;
    char token[64];
    char message[256];
} cutune__expr_error;

/* Upper bound on elements of any list an evaluation builds (range,
 * comprehension, +), so a hostile file cannot exhaust memory. */
#define CUTUNE__EXPR_DEFAULT_MAX_LIST ((size_t)1 << 24)

/* NULL on failure with *err filled (err may be NULL). `max_list` 0 means
 * CUTUNE__EXPR_DEFAULT_MAX_LIST. */
cutune__expr *cutune__expr_parse(const char *text, size_t max_list,
                                 cutune__expr_error *err);
void cutune__expr_free(cutune__expr *e);
const char *cutune__expr_text(const cutune__expr *e);

size_t cutune__expr_name_count(const cutune__expr *e);
const char *cutune__expr_name(const cutune__expr *e, size_t i);

/* Evaluates with vars[i] bound to cutune__expr_name(e, i) (vars is borrowed;
 * may be NULL when there are no names). On success *out holds a new value
 * the caller clears. Returns 0, or -1 with *err filled (division by zero,
 * type errors, index out of range, list too long). */
int cutune__expr_eval(const cutune__expr *e, const cutune__value *vars,
                      cutune__value *out, cutune__expr_error *err);

/* cutune__expr_eval under a budget of steps (list elements made and
 * comprehension iterations) shared by many evaluations: *steps is what is
 * left, and what this evaluation takes is subtracted. When it runs out the
 * evaluation fails with a message saying so, so that a condition checked
 * once per configuration cannot run without bound over a space. */
/* About a minute of the tree evaluator; a condition that only compares
 * parameters compiles to a program and takes no steps. */
#define CUTUNE__EXPR_SPACE_STEPS ((size_t)1 << 30)
int cutune__expr_eval_steps(const cutune__expr *e, const cutune__value *vars,
                            cutune__value *out, cutune__expr_error *err,
                            size_t *steps);

/* Shorthand: parse and evaluate an expression that names nothing. */
int cutune__expr_eval_const(const char *text, cutune__value *out,
                            cutune__expr_error *err);

/* ---- Compiled programs ----
 *
 * Conditions are evaluated once per candidate configuration, so the space
 * compiles each into a flat program over numeric slots: every free name is
 * either a variable of a fixed numeric type (int, bool or float) or a
 * constant known at compile time, subexpressions that name no variable are
 * evaluated once here, and each operation has a static type. A program
 * computes exactly what cutune__expr_eval computes (Python semantics, the
 * same overflow rules, shared code for every operator); where that would
 * fail, or where the type of a result is only known at run time (int **
 * negative int), the program answers "undecided" and the caller asks
 * cutune__expr_eval, which gives the value or the error.
 *
 * A compiled program is immutable and may be shared between threads; the
 * slots are the caller's. */

/* One slot: `i` for int and bool (0 or 1), `f` for float. */
typedef union cutune__slot {
    int64_t i;
    double f;
} cutune__slot;

typedef struct cutune__expr_prog cutune__expr_prog;

/* What a program computes: the expression's value, or only its truth (which
 * compiles more expressions: `x > 0 and 0.5` has no static type). */
typedef enum cutune__prog_mode {
    CUTUNE__PROG_VALUE = 0,
    CUTUNE__PROG_TRUTH = 1
} cutune__prog_mode;

/* Compiles `e` (borrowed; the program does not refer to it afterwards).
 * For each name i of e: constants[i] non-NULL binds it to that constant
 * (borrowed during the call; may be NULL as a whole when there are none),
 * otherwise it is a variable of type types[i] (CUTUNE__V_INT, _BOOL or
 * _FLOAT) read from slot i. Returns NULL when the expression uses what
 * programs do not cover (strings, lists or calls on variables, mixed result
 * types), when a constant part fails to evaluate, or when memory ran out:
 * the caller then evaluates with cutune__expr_eval alone. */
cutune__expr_prog *cutune__expr_compile(const cutune__expr *e,
                                        const cutune__vtype *types,
                                        const cutune__value *const *constants,
                                        cutune__prog_mode mode);
/* NULL is a no-op. */
void cutune__expr_prog_free(cutune__expr_prog *g);
/* Slots an evaluation needs: the names first, then temporaries and
 * constants. */
size_t cutune__expr_prog_slot_count(const cutune__expr_prog *g);
/* Writes the program's constants into `slots`; once per slot array. */
void cutune__expr_prog_init_slots(const cutune__expr_prog *g,
                                  cutune__slot *slots);
/* Runs a program (of either mode) on slots whose first name-count entries
 * hold the variables: 1 true, 0 false, -1 undecided. */
int cutune__expr_prog_truth(const cutune__expr_prog *g, cutune__slot *slots);
/* Runs a CUTUNE__PROG_VALUE program: 0 with *out set (int, bool or float;
 * nothing to clear), or -1 undecided (always, for a truth program). */
int cutune__expr_prog_eval(const cutune__expr_prog *g, cutune__slot *slots,
                           cutune__value *out);

#endif
