/* What the files of the T1 expression language share and nothing else
 * sees: the parsed tree, the lexer's tokens, the evaluator's context and the
 * compiled program's form (expr.h has the interface). The language lives in
 * one file per stage: expr_value.c (values, errors, text), expr_lex.c,
 * expr_parse.c, expr_resolve.c, expr_eval.c, expr_builtins.c (calls and
 * list building), expr_compile.c and expr_prog.c (compiled programs).
 *
 * Hostile input is expected (files come from anywhere, and the parser is
 * fuzzed): nesting is capped so that no recursion here can exhaust the
 * stack, every list length is checked against a limit before allocating,
 * and one evaluation may only create a bounded number of list elements, so
 * nested comprehensions cannot run for hours either.
 */
#ifndef CUTUNE_SEARCH_EXPR_INTERNAL_H
#define CUTUNE_SEARCH_EXPR_INTERNAL_H

#include "expr.h"
#include "none.h"

#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both the parser's recursion and the height of the tree (which bounds the
 * evaluator's recursion) stay under this. CPython's parser has a limit of
 * the same order for nested brackets. */
#define MAX_NESTING 200

/* One evaluation may create this many times max_list list elements in all,
 * counting temporaries and comprehension iterations. */
#define WORK_FACTOR 8

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ------------------------------------------------------------------ */
/* Tree                                                                */

enum node_kind {
    N_LIT,
    N_NAME,  /* before resolution */
    N_VAR,   /* free name: index into the caller's vars */
    N_LOCAL, /* comprehension variable: slot in the evaluation's locals */
    N_NEG,
    N_POS,
    N_NOT,
    N_ARITH, /* left-associative chain of + - * / // % (or one **) */
    N_CMP,   /* comparison chain */
    N_AND,
    N_OR,
    N_COND,
    N_LIST,
    N_COMP,
    N_INDEX,
    N_CALL
};

enum op {
    OP_NONE,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_FLOORDIV,
    OP_MOD,
    OP_POW,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_IN,
    OP_NOTIN
};

static const char *const op_text[] = {
    "?",  "+",  "-", "*",  "/", "//", "%",  "**",
    "==", "!=", "<", "<=", ">", ">=", "in", "not in"};

enum builtin { B_RANGE, B_LIST, B_LEN, B_MAX, B_MIN };

static const char *const builtin_names[] = {"range", "list", "len", "max",
                                            "min"};

typedef struct node node;

/* Chains are flat so that `a+b+c+...` with thousands of terms costs no
 * depth. */
typedef struct operand {
    node *e;
    int op;          /* the operator before e; unused for the first */
    size_t pos, len; /* that operator's token */
} operand;

typedef struct clause {
    node *e; /* the iterable of a `for`, the condition of an `if` */
    int is_for;
    size_t slot;
    size_t pos, len; /* the target name of a `for` */
} clause;

struct node {
    int kind;
    int fn; /* N_CALL */
    int height;
    size_t pos, len; /* the token errors point at */
    node *next_lit;  /* every N_LIT, so their values can be cleared */
    union {
        cutune__value lit;
        size_t index;
        node *kid[3]; /* unary: [0]; index: [0][[1]]; cond: [0] if [1] else [2]
                       */
        struct {
            node **v;
            size_t n;
        } seq;
        struct {
            operand *v;
            size_t n;
        } chain;
        struct {
            node *elem;
            clause *v;
            size_t n;
        } comp;
    } u;
};

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
} chunk;

struct cutune__expr {
    char *text;
    size_t max_list;
    node *root;
    chunk *arena;
    node *lits;
    size_t n_locals;
    char **names;
    size_t *name_pos;
    size_t n_names, cap_names;
};

/* ------------------------------------------------------------------ */
/* Lexer                                                               */

enum tok_type {
    T_EOF,
    T_INT,
    T_FLOAT,
    T_STR,
    T_NAME,
    T_LPAR,
    T_RPAR,
    T_LBR,
    T_RBR,
    T_COMMA,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_SLASH,
    T_DSLASH,
    T_PERCENT,
    T_POW,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_AND,
    T_OR,
    T_NOT,
    T_IN,
    T_IF,
    T_ELSE,
    T_FOR,
    T_TRUE,
    T_FALSE,
    T_NONE
};

typedef struct tok {
    int type;
    size_t pos, len;
} tok;

typedef struct parser {
    const char *text;
    size_t len;
    tok cur;
    cutune__expr *e;
    cutune__expr_error *err;
    int depth;
} parser;

/* ------------------------------------------------------------------ */
/* Evaluation                                                          */

typedef struct ev_ctx {
    const cutune__expr *e;
    const cutune__value *vars;
    const cutune__value **locals;
    cutune__expr_error *err;
    size_t budget; /* list elements this evaluation may still create */
    /* The caller's budget over many evaluations (cutune__expr_eval_steps)
     * when it is what limits this one; 0 otherwise. */
    size_t steps_cap;
} ev_ctx;

/* ------------------------------------------------------------------ */
/* Compiled programs                                                   */

/* Operations of a program. Slots a and b are read, dst written; `cmp`
 * holds the comparison of F_CMP_* and whether F_IN_* is `not in`; `arg` a
 * jump target or a membership table. */
enum fop {
    F_ADD_I,
    F_SUB_I,
    F_MUL_I,
    F_TDIV_I, /* int / int: a float */
    F_FDIV_I,
    F_MOD_I,
    F_POW_I,    /* undecided for a negative exponent: the type changes */
    F_POWNEG_I, /* the exponent is a negative constant: a float */
    F_ADD_F,
    F_SUB_F,
    F_MUL_F,
    F_TDIV_F,
    F_FDIV_F,
    F_MOD_F,
    F_POW_F,
    F_NEG_I,
    F_NEG_F,
    F_I2F,
    F_MOV,
    F_NOT_I,
    F_NOT_F,
    F_TRUTH_F,
    F_EQ_II,
    F_NE_II,
    F_LT_II,
    F_LE_II,
    F_GT_II,
    F_GE_II,
    F_CMP_IF,
    F_CMP_FI,
    F_CMP_FF,
    F_IN_I,
    F_IN_F,
    F_MAX_I,
    F_MIN_I,
    F_MAX_F,
    F_MIN_F,
    F_JMP,
    F_JZ_I,
    F_JNZ_I,
    F_JZ_F,
    F_JNZ_F
};

typedef struct finsn {
    uint8_t op, cmp;
    uint16_t dst, a, b;
    uint32_t arg;
} finsn;

/* The numbers of a constant list, for `in`: equality with a number never
 * holds for an item that is not one. */
typedef struct ftable {
    int64_t *ints; /* int and bool items, ascending */
    size_t n_ints;
    double *floats;
    size_t n_floats;
} ftable;

/* Static types of slots. */
enum { TY_INT = 1, TY_BOOL, TY_FLOAT, TY_OBJ };

struct cutune__expr_prog {
    finsn *code;
    size_t n_code;
    size_t n_slots;
    size_t const_base; /* constants occupy [const_base, const_base+n) */
    cutune__slot *consts;
    size_t n_consts;
    ftable *tables;
    size_t n_tables;
    unsigned result;
    int result_type;
    int mode;
};

/* Functions one file lends the others, by the file that defines them;
 * each is described at its definition. */

/* expr_value.c */
void cutune__expr_verror(cutune__expr_error *err, const char *text, size_t pos,
                         size_t len, const char *fmt, va_list ap);
void cutune__expr_set_error(cutune__expr_error *err, const char *text,
                            size_t pos, size_t len, const char *fmt, ...)
    PRINTF_LIKE(5, 6);
void cutune__expr_set_oom(cutune__expr_error *err);
const char *cutune__expr_type_name(const cutune__value *v);
int cutune__expr_is_intlike(const cutune__value *v);
int cutune__expr_is_number(const cutune__value *v);
double cutune__expr_as_double(const cutune__value *v);
void cutune__expr_set_int(cutune__value *v, int64_t i);
void cutune__expr_set_float(cutune__value *v, double f);
void cutune__expr_set_bool(cutune__value *v, int b);
void cutune__expr_set_empty_list(cutune__value *v);
char *cutune__expr_dup_bytes(const char *s, size_t n);
int cutune__expr_cmp_int_float(int64_t i, double f);
int cutune__expr_num_cmp(const cutune__value *a, const cutune__value *b);

/* expr_lex.c */
int cutune__expr_perror_at(parser *p, size_t pos, size_t len, const char *fmt,
                           ...) PRINTF_LIKE(4, 5);
int cutune__expr_word_is(const char *s, size_t n, const char *w);
int cutune__expr_lex(parser *p, size_t pos, tok *t);
int cutune__expr_advance(parser *p);
int cutune__expr_unexpected(parser *p);
int cutune__expr_expect_close(parser *p, int type, const tok *open);
node *cutune__expr_parse_int_literal(parser *p);
node *cutune__expr_parse_float_literal(parser *p);
node *cutune__expr_parse_str_literal(parser *p);

/* expr_parse.c */
node *cutune__expr_new_node(parser *p, int kind, size_t pos, size_t len);

/* expr_resolve.c */
/* Binds every name of e's tree: 0, or -1 with *err filled. */
int cutune__expr_resolve(cutune__expr *e, cutune__expr_error *err);

/* expr_eval.c */
int cutune__expr_ev_fail(ev_ctx *c, size_t pos, size_t len, const char *fmt,
                         ...) PRINTF_LIKE(4, 5);
int cutune__expr_ev_oom(ev_ctx *c);
int cutune__expr_charge(ev_ctx *c, size_t pos, size_t len, size_t n);
int cutune__expr_ev_copy(ev_ctx *c, size_t pos, size_t len, cutune__value *dst,
                         const cutune__value *src);
int cutune__expr_ev_take(ev_ctx *c, const node *n, cutune__value *dst,
                         cutune__value *tmp, const cutune__value *res);
int cutune__expr_compare(ev_ctx *c, const operand *o, int op,
                         const cutune__value *a, const cutune__value *b,
                         int *out);
int cutune__expr_ev(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res);

/* expr_builtins.c */
int cutune__expr_list_concat(ev_ctx *c, const operand *o,
                             const cutune__value *a, cutune__value *a_own,
                             const cutune__value *b, cutune__value *b_own,
                             cutune__value *out);
int cutune__expr_repeat(ev_ctx *c, const operand *o, const cutune__value *a,
                        int64_t times, cutune__value *out);
int cutune__expr_ev_call(ev_ctx *c, const node *n, cutune__value *tmp,
                         const cutune__value **res);
int cutune__expr_ev_list(ev_ctx *c, const node *n, cutune__value *tmp,
                         const cutune__value **res);
int cutune__expr_ev_comp(ev_ctx *c, const node *n, cutune__value *tmp,
                         const cutune__value **res);

#endif
