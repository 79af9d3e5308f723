/* The parser of the T1 expression language: tokens to a tree held in an
 * arena, by recursive descent with the nesting capped (expr_internal.h).
 * Names are told apart afterwards, in expr_resolve.c. */
#include "expr_internal.h"

static void *arena_alloc(chunk **arena, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX / 4)
        return NULL;
    size = (size + align - 1) / align * align;
    chunk *c = *arena;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 4096 ? size : 4096;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = *arena;
        c->used = 0;
        c->cap = cap;
        *arena = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

static void arena_free(chunk *c)
{
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
}

void cutune__expr_free(cutune__expr *e)
{
    if (!e)
        return;
    for (node *n = e->lits; n; n = n->next_lit)
        cutune__value_clear(&n->u.lit);
    arena_free(e->arena);
    for (size_t i = 0; i < e->n_names; i++)
        free(e->names[i]);
    free(e->names);
    free(e->name_pos);
    free(e->text);
    free(e);
}

const char *cutune__expr_text(const cutune__expr *e)
{
    return e ? e->text : NULL;
}

size_t cutune__expr_name_count(const cutune__expr *e)
{
    return e ? e->n_names : 0;
}

const char *cutune__expr_name(const cutune__expr *e, size_t i)
{
    return e && i < e->n_names ? e->names[i] : NULL;
}

static int enter(parser *p)
{
    if (++p->depth > MAX_NESTING)
        return cutune__expr_perror_at(p, p->cur.pos, p->cur.len,
                                      "expression nested too deeply");
    return 0;
}

node *cutune__expr_new_node(parser *p, int kind, size_t pos, size_t len)
{
    node *n = arena_alloc(&p->e->arena, sizeof *n);
    if (!n) {
        cutune__expr_set_oom(p->err);
        return NULL;
    }
    n->kind = kind;
    n->pos = pos;
    n->len = len;
    n->height = 1;
    if (kind == N_LIT) {
        n->next_lit = p->e->lits;
        p->e->lits = n;
    }
    return n;
}

/* Grows an arena array by doubling; the old copy stays in the arena.
 * Returns the array to use from now on, NULL when memory ran out. */
static void *grow(parser *p, void *v, size_t n, size_t *cap, size_t elsize)
{
    if (n < *cap)
        return v;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *nv = arena_alloc(&p->e->arena, ncap * elsize);
    if (!nv) {
        cutune__expr_set_oom(p->err);
        return NULL;
    }
    if (n)
        memcpy(nv, v, n * elsize);
    *cap = ncap;
    return nv;
}

static int set_height(parser *p, node *n, int kids_height)
{
    n->height = kids_height + 1;
    if (n->height > MAX_NESTING)
        return cutune__expr_perror_at(p, n->pos, n->len,
                                      "expression nested too deeply");
    return 0;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

/* Python keywords we do not implement; as names they would silently become
 * free variables. */
static const char *const reserved[] = {
    "is",      "lambda", "def",      "class",  "return", "yield", "import",
    "from",    "as",     "with",     "while",  "pass",   "break", "continue",
    "del",     "global", "nonlocal", "assert", "raise",  "try",   "except",
    "finally", "elif",   "async",    "await"};

static node *parse_expr(parser *p);
static node *parse_or(parser *p);
static node *parse_factor(parser *p);

/* Parses the `for`/`if` clauses after `elem`; the current token is `for`. */
static node *parse_comprehension(parser *p, node *elem, size_t pos, size_t len)
{
    node *n = cutune__expr_new_node(p, N_COMP, pos, len);
    if (!n)
        return NULL;
    n->u.comp.elem = elem;
    size_t cap = 0;
    int h = elem->height;
    while (p->cur.type == T_FOR || (p->cur.type == T_IF && n->u.comp.n)) {
        clause *cv = grow(p, n->u.comp.v, n->u.comp.n, &cap, sizeof *cv);
        if (!cv)
            return NULL;
        n->u.comp.v = cv;
        clause *c = &cv[n->u.comp.n];
        c->is_for = p->cur.type == T_FOR;
        if (cutune__expr_advance(p))
            return NULL;
        if (c->is_for) {
            if (p->cur.type != T_NAME) {
                cutune__expr_unexpected(p);
                return NULL;
            }
            c->pos = p->cur.pos;
            c->len = p->cur.len;
            c->slot = p->e->n_locals++;
            if (cutune__expr_advance(p))
                return NULL;
            if (p->cur.type != T_IN) {
                cutune__expr_unexpected(p);
                return NULL;
            }
            if (cutune__expr_advance(p))
                return NULL;
        }
        c->e = parse_or(p);
        if (!c->e)
            return NULL;
        h = max_int(h, c->e->height);
        n->u.comp.n++;
    }
    /* Each clause is one more level of recursion when evaluating. */
    if (set_height(
            p, n,
            h + (int)(n->u.comp.n > MAX_NESTING ? MAX_NESTING : n->u.comp.n)))
        return NULL;
    return n;
}

static node *parse_list(parser *p)
{
    tok open = p->cur;
    if (cutune__expr_advance(p))
        return NULL;
    node *n = cutune__expr_new_node(p, N_LIST, open.pos, open.len);
    if (!n)
        return NULL;
    size_t cap = 0;
    int h = 0, all_lit = 1;
    while (p->cur.type != T_RBR) {
        node *item = parse_expr(p);
        if (!item)
            return NULL;
        if (n->u.seq.n == 0 && p->cur.type == T_FOR) {
            node *c = parse_comprehension(p, item, open.pos, open.len);
            if (!c || cutune__expr_expect_close(p, T_RBR, &open))
                return NULL;
            return c;
        }
        node **v = grow(p, n->u.seq.v, n->u.seq.n, &cap, sizeof *v);
        if (!v)
            return NULL;
        n->u.seq.v = v;
        v[n->u.seq.n++] = item;
        h = max_int(h, item->height);
        all_lit &= item->kind == N_LIT;
        if (p->cur.type != T_COMMA)
            break;
        if (cutune__expr_advance(p))
            return NULL;
    }
    if (cutune__expr_expect_close(p, T_RBR, &open))
        return NULL;
    if (!all_lit)
        return set_height(p, n, h) ? NULL : n;

    /* A list of constants is built once here rather than per evaluation,
     * so `x in [1, 2, 4]` costs no allocation. */
    node *lit = cutune__expr_new_node(p, N_LIT, open.pos, open.len);
    if (!lit)
        return NULL;
    cutune__expr_set_empty_list(&lit->u.lit);
    if (n->u.seq.n) {
        cutune__value *items = malloc(n->u.seq.n * sizeof *items);
        if (!items) {
            cutune__expr_set_oom(p->err);
            return NULL;
        }
        for (size_t i = 0; i < n->u.seq.n; i++) {
            items[i] = n->u.seq.v[i]->u.lit;
            n->u.seq.v[i]->u.lit.type = CUTUNE__V_NONE;
        }
        lit->u.lit.u.list.items = items;
        lit->u.lit.u.list.n = n->u.seq.n;
    }
    return lit;
}

static node *parse_call(parser *p)
{
    tok name = p->cur;
    int fn = -1;
    for (int k = 0; k < (int)(sizeof builtin_names / sizeof *builtin_names);
         k++)
        if (cutune__expr_word_is(p->text + name.pos, name.len,
                                 builtin_names[k]))
            fn = k;
    if (fn < 0) {
        cutune__expr_perror_at(
            p, name.pos, name.len, "unknown function '%.*s'",
            (int)(name.len > 64 ? 64 : name.len), p->text + name.pos);
        return NULL;
    }
    if (cutune__expr_advance(p))
        return NULL;
    tok open = p->cur;
    if (cutune__expr_advance(p))
        return NULL;
    node *n = cutune__expr_new_node(p, N_CALL, name.pos, name.len);
    if (!n)
        return NULL;
    n->fn = fn;
    size_t cap = 0;
    int h = 0;
    while (p->cur.type != T_RPAR) {
        node *arg = parse_expr(p);
        if (!arg)
            return NULL;
        /* max(x for x in ...): a generator argument, built as a list. */
        if (n->u.seq.n == 0 && p->cur.type == T_FOR) {
            arg = parse_comprehension(p, arg, arg->pos, arg->len);
            if (!arg)
                return NULL;
            if (p->cur.type != T_RPAR) {
                cutune__expr_expect_close(p, T_RPAR, &open);
                return NULL;
            }
        }
        node **v = grow(p, n->u.seq.v, n->u.seq.n, &cap, sizeof *v);
        if (!v)
            return NULL;
        n->u.seq.v = v;
        v[n->u.seq.n++] = arg;
        h = max_int(h, arg->height);
        if (p->cur.type != T_COMMA)
            break;
        if (cutune__expr_advance(p))
            return NULL;
    }
    if (cutune__expr_expect_close(p, T_RPAR, &open))
        return NULL;
    size_t argc = n->u.seq.n;
    const char *fname = builtin_names[fn];
    int bad = 0;
    switch (fn) {
    case B_RANGE:
        if ((bad = argc < 1 || argc > 3))
            cutune__expr_perror_at(p, name.pos, name.len,
                                   "%s() takes 1 to 3 arguments (%zu given)",
                                   fname, argc);
        break;
    case B_LIST:
        if ((bad = argc > 1))
            cutune__expr_perror_at(p, name.pos, name.len,
                                   "%s() takes at most 1 argument (%zu given)",
                                   fname, argc);
        break;
    case B_LEN:
        if ((bad = argc != 1))
            cutune__expr_perror_at(
                p, name.pos, name.len,
                "%s() takes exactly one argument (%zu given)", fname, argc);
        break;
    default:
        if ((bad = argc < 1))
            cutune__expr_perror_at(
                p, name.pos, name.len,
                "%s() expects at least 1 argument (0 given)", fname);
    }
    if (bad || set_height(p, n, h))
        return NULL;
    return n;
}

static node *parse_atom(parser *p)
{
    node *n = NULL;
    switch (p->cur.type) {
    case T_INT: n = cutune__expr_parse_int_literal(p); break;
    case T_FLOAT: n = cutune__expr_parse_float_literal(p); break;
    case T_STR: n = cutune__expr_parse_str_literal(p); break;
    case T_TRUE:
    case T_FALSE:
    case T_NONE:
        n = cutune__expr_new_node(p, N_LIT, p->cur.pos, p->cur.len);
        if (n && p->cur.type != T_NONE)
            cutune__expr_set_bool(&n->u.lit, p->cur.type == T_TRUE);
        break;
    case T_NAME: {
        for (size_t k = 0; k < sizeof reserved / sizeof *reserved; k++)
            if (cutune__expr_word_is(p->text + p->cur.pos, p->cur.len,
                                     reserved[k])) {
                cutune__expr_perror_at(p, p->cur.pos, p->cur.len,
                                       "unsupported keyword '%s'",
                                       reserved[k]);
                return NULL;
            }
        tok next;
        if (cutune__expr_lex(p, p->cur.pos + p->cur.len, &next))
            return NULL;
        if (next.type == T_LPAR)
            return parse_call(p);
        n = cutune__expr_new_node(p, N_NAME, p->cur.pos, p->cur.len);
        break;
    }
    case T_LPAR: {
        tok open = p->cur;
        if (cutune__expr_advance(p))
            return NULL;
        if (p->cur.type == T_RPAR) {
            cutune__expr_perror_at(p, open.pos, 2, "tuples are not supported");
            return NULL;
        }
        n = parse_expr(p);
        if (!n)
            return NULL;
        if (p->cur.type == T_COMMA) {
            cutune__expr_perror_at(p, p->cur.pos, p->cur.len,
                                   "tuples are not supported");
            return NULL;
        }
        if (cutune__expr_expect_close(p, T_RPAR, &open))
            return NULL;
        return n;
    }
    case T_LBR: return parse_list(p);
    default: cutune__expr_unexpected(p); return NULL;
    }
    if (n && cutune__expr_advance(p))
        return NULL;
    return n;
}

static node *parse_postfix(parser *p)
{
    node *n = parse_atom(p);
    while (n && p->cur.type == T_LBR) {
        tok open = p->cur;
        if (cutune__expr_advance(p))
            return NULL;
        node *idx = parse_expr(p);
        if (!idx || cutune__expr_expect_close(p, T_RBR, &open))
            return NULL;
        node *ix = cutune__expr_new_node(p, N_INDEX, open.pos, open.len);
        if (!ix)
            return NULL;
        ix->u.kid[0] = n;
        ix->u.kid[1] = idx;
        if (set_height(p, ix, max_int(n->height, idx->height)))
            return NULL;
        n = ix;
    }
    return n;
}

static node *make_chain(parser *p, int kind, node *first, const tok *op_tok)
{
    node *n = cutune__expr_new_node(p, kind, op_tok->pos, op_tok->len);
    if (!n)
        return NULL;
    n->u.chain.v = arena_alloc(&p->e->arena, 4 * sizeof(operand));
    if (!n->u.chain.v) {
        cutune__expr_set_oom(p->err);
        return NULL;
    }
    n->u.chain.v[0].e = first;
    n->u.chain.n = 1;
    n->height = first->height;
    return n;
}

static int chain_push(parser *p, node *n, size_t *cap, int op,
                      const tok *op_tok, node *e)
{
    if (*cap == 0)
        *cap = 4;
    operand *v = grow(p, n->u.chain.v, n->u.chain.n, cap, sizeof *v);
    if (!v)
        return -1;
    n->u.chain.v = v;
    operand *o = &v[n->u.chain.n++];
    o->e = e;
    o->op = op;
    o->pos = op_tok->pos;
    o->len = op_tok->len;
    if (e->height > n->height)
        n->height = e->height;
    return 0;
}

static node *parse_power(parser *p)
{
    node *base = parse_postfix(p);
    if (!base || p->cur.type != T_POW)
        return base;
    tok op = p->cur;
    size_t cap = 0;
    node *n = make_chain(p, N_ARITH, base, &op);
    if (!n || cutune__expr_advance(p) || enter(p))
        return NULL;
    node *exp = parse_factor(p); /* right-associative, and 2**-1 is valid */
    p->depth--;
    if (!exp || chain_push(p, n, &cap, OP_POW, &op, exp) ||
        set_height(p, n, n->height))
        return NULL;
    return n;
}

static node *parse_factor(parser *p)
{
    if (p->cur.type != T_PLUS && p->cur.type != T_MINUS)
        return parse_power(p);
    tok op = p->cur;
    if (cutune__expr_advance(p) || enter(p))
        return NULL;
    node *a = parse_factor(p);
    p->depth--;
    if (!a)
        return NULL;
    if (a->kind == N_LIT && cutune__expr_is_number(&a->u.lit)) {
        /* Folding makes `[-1, 2]` a constant list; no literal is
         * INT64_MIN, so negating cannot overflow. */
        cutune__value *v = &a->u.lit;
        if (v->type == CUTUNE__V_FLOAT)
            v->u.f = op.type == T_MINUS ? -v->u.f : v->u.f;
        else
            cutune__expr_set_int(v, op.type == T_MINUS ? -v->u.i : v->u.i);
        a->pos = op.pos;
        a->len = op.len;
        return a;
    }
    node *n = cutune__expr_new_node(p, op.type == T_MINUS ? N_NEG : N_POS,
                                    op.pos, op.len);
    if (!n)
        return NULL;
    n->u.kid[0] = a;
    return set_height(p, n, a->height) ? NULL : n;
}

static int arith_op(int type, int term)
{
    if (term)
        return type == T_STAR      ? OP_MUL
               : type == T_SLASH   ? OP_DIV
               : type == T_DSLASH  ? OP_FLOORDIV
               : type == T_PERCENT ? OP_MOD
                                   : OP_NONE;
    return type == T_PLUS ? OP_ADD : type == T_MINUS ? OP_SUB : OP_NONE;
}

static node *parse_binary(parser *p, int term)
{
    node *first = term ? parse_factor(p) : parse_binary(p, 1);
    if (!first || arith_op(p->cur.type, term) == OP_NONE)
        return first;
    node *n = make_chain(p, N_ARITH, first, &p->cur);
    size_t cap = 0;
    while (n && arith_op(p->cur.type, term) != OP_NONE) {
        tok op = p->cur;
        if (cutune__expr_advance(p))
            return NULL;
        node *e = term ? parse_factor(p) : parse_binary(p, 1);
        if (!e || chain_push(p, n, &cap, arith_op(op.type, term), &op, e))
            return NULL;
    }
    return n && !set_height(p, n, n->height) ? n : NULL;
}

/* Reads a comparison operator, consuming `not in` as one. Returns OP_NONE
 * when the current token is none. */
static int cmp_op(parser *p, tok *op)
{
    static const int map[][2] = {{T_EQ, OP_EQ}, {T_NE, OP_NE}, {T_LT, OP_LT},
                                 {T_LE, OP_LE}, {T_GT, OP_GT}, {T_GE, OP_GE},
                                 {T_IN, OP_IN}};
    *op = p->cur;
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (p->cur.type == map[k][0])
            return map[k][1];
    if (p->cur.type == T_NOT) {
        tok next;
        if (cutune__expr_lex(p, p->cur.pos + p->cur.len, &next) == 0 &&
            next.type == T_IN) {
            op->len = next.pos + next.len - op->pos;
            return OP_NOTIN;
        }
    }
    return OP_NONE;
}

static node *parse_cmp(parser *p)
{
    node *first = parse_binary(p, 0);
    tok op;
    if (!first || cmp_op(p, &op) == OP_NONE)
        return first;
    node *n = make_chain(p, N_CMP, first, &op);
    size_t cap = 0;
    int code;
    while (n && (code = cmp_op(p, &op)) != OP_NONE) {
        if (cutune__expr_advance(p) ||
            (code == OP_NOTIN && cutune__expr_advance(p)))
            return NULL;
        node *e = parse_binary(p, 0);
        if (!e || chain_push(p, n, &cap, code, &op, e))
            return NULL;
    }
    return n && !set_height(p, n, n->height) ? n : NULL;
}

static node *parse_not(parser *p)
{
    if (p->cur.type != T_NOT)
        return parse_cmp(p);
    tok op = p->cur;
    if (cutune__expr_advance(p) || enter(p))
        return NULL;
    node *a = parse_not(p);
    p->depth--;
    if (!a)
        return NULL;
    node *n = cutune__expr_new_node(p, N_NOT, op.pos, op.len);
    if (!n)
        return NULL;
    n->u.kid[0] = a;
    return set_height(p, n, a->height) ? NULL : n;
}

static node *parse_bool_chain(parser *p, int type)
{
    node *first = type == T_OR ? parse_bool_chain(p, T_AND) : parse_not(p);
    if (!first || p->cur.type != type)
        return first;
    node *n = cutune__expr_new_node(p, type == T_OR ? N_OR : N_AND, p->cur.pos,
                                    p->cur.len);
    if (!n)
        return NULL;
    size_t cap = 0;
    int h = 0;
    node *e = first;
    for (;;) {
        node **v = grow(p, n->u.seq.v, n->u.seq.n, &cap, sizeof *v);
        if (!v)
            return NULL;
        n->u.seq.v = v;
        v[n->u.seq.n++] = e;
        h = max_int(h, e->height);
        if (p->cur.type != type)
            break;
        if (cutune__expr_advance(p))
            return NULL;
        e = type == T_OR ? parse_bool_chain(p, T_AND) : parse_not(p);
        if (!e)
            return NULL;
    }
    return set_height(p, n, h) ? NULL : n;
}

static node *parse_or(parser *p)
{
    return parse_bool_chain(p, T_OR);
}

static node *parse_expr(parser *p)
{
    if (enter(p))
        return NULL;
    node *n = parse_or(p);
    if (n && p->cur.type == T_IF) {
        tok op = p->cur;
        node *c = NULL, *alt = NULL, *cond = NULL;
        if (cutune__expr_advance(p) || !(c = parse_or(p)))
            return NULL;
        if (p->cur.type != T_ELSE) {
            cutune__expr_unexpected(p);
            return NULL;
        }
        if (cutune__expr_advance(p) || !(alt = parse_expr(p)))
            return NULL;
        if (!(cond = cutune__expr_new_node(p, N_COND, op.pos, op.len)))
            return NULL;
        cond->u.kid[0] = n;
        cond->u.kid[1] = c;
        cond->u.kid[2] = alt;
        if (set_height(p, cond,
                       max_int(n->height, max_int(c->height, alt->height))))
            return NULL;
        n = cond;
    }
    p->depth--;
    return n;
}

cutune__expr *cutune__expr_parse(const char *text, size_t max_list,
                                 cutune__expr_error *err)
{
    if (!text) {
        cutune__expr_set_error(err, NULL, 0, 0, "no expression");
        return NULL;
    }
    cutune__expr *e = calloc(1, sizeof *e);
    if (!e) {
        cutune__expr_set_oom(err);
        return NULL;
    }
    e->max_list = max_list ? max_list : CUTUNE__EXPR_DEFAULT_MAX_LIST;
    e->text = cutune__expr_dup_bytes(text, strlen(text));
    if (!e->text) {
        cutune__expr_set_oom(err);
        free(e);
        return NULL;
    }
    parser p = {0};
    p.text = e->text;
    p.len = strlen(text);
    p.e = e;
    p.err = err;
    p.cur.pos = 0;
    p.cur.len = 0;
    if (cutune__expr_lex(&p, 0, &p.cur))
        goto fail;
    if (p.cur.type == T_EOF) {
        cutune__expr_perror_at(&p, 0, 0, "empty expression");
        goto fail;
    }
    e->root = parse_expr(&p);
    if (!e->root)
        goto fail;
    if (p.cur.type == T_RPAR || p.cur.type == T_RBR) {
        cutune__expr_perror_at(&p, p.cur.pos, 1, "unmatched '%c'",
                               p.text[p.cur.pos]);
        goto fail;
    }
    if (p.cur.type != T_EOF) {
        cutune__expr_unexpected(&p);
        goto fail;
    }
    if (cutune__expr_resolve(e, err))
        goto fail;
    return e;
fail:
    cutune__expr_free(e);
    return NULL;
}
