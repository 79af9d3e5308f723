/* The tree evaluator of the T1 expression language.
 *
 * Evaluation hands values around as "borrowed or owned": every evaluator
 * gets a scratch value `tmp` it may fill, and returns a pointer `res` that
 * is either `tmp` (owned, the caller clears it) or storage that outlives the
 * call (a bound variable, a literal in the tree, an item of a list being
 * iterated). Reading a parameter, indexing a bound list and all scalar
 * arithmetic therefore allocate nothing, which matters because conditions
 * are evaluated once per candidate configuration.
 */
#include "expr_arith.h"
#include "expr_internal.h"

int cutune__expr_ev_fail(ev_ctx *c, size_t pos, size_t len, const char *fmt,
                         ...)
{
    va_list ap;
    va_start(ap, fmt);
    cutune__expr_verror(c->err, c->e->text, pos, len, fmt, ap);
    va_end(ap);
    return -1;
}

int cutune__expr_ev_oom(ev_ctx *c)
{
    cutune__expr_set_oom(c->err);
    return -1;
}

int cutune__expr_charge(ev_ctx *c, size_t pos, size_t len, size_t n)
{
    if (n > c->budget && c->steps_cap)
        return cutune__expr_ev_fail(
            c, pos, len,
            "its evaluations took more than %zu steps (list "
            "values and loop iterations) over the configurations checked "
            "so far; a condition is evaluated once per configuration, so "
            "keep its loops short",
            c->steps_cap);
    if (n > c->budget)
        return cutune__expr_ev_fail(
            c, pos, len, "evaluation builds more than %zu values in all",
            c->e->max_list * WORK_FACTOR);
    c->budget -= n;
    return 0;
}

static size_t value_weight(const cutune__value *v)
{
    if (v->type == CUTUNE__V_STR)
        return strlen(v->u.s) / sizeof *v;
    if (v->type != CUTUNE__V_LIST)
        return 0;
    size_t w = v->u.list.n;
    for (size_t i = 0; i < v->u.list.n && w != SIZE_MAX; i++) {
        size_t k = value_weight(&v->u.list.items[i]);
        w = k > SIZE_MAX - w ? SIZE_MAX : w + k;
    }
    return w;
}

/* Deep copy that counts against the evaluation's budget. */
int cutune__expr_ev_copy(ev_ctx *c, size_t pos, size_t len, cutune__value *dst,
                         const cutune__value *src)
{
    dst->type = CUTUNE__V_NONE;
    if (cutune__expr_charge(c, pos, len, value_weight(src)))
        return -1;
    return cutune__value_copy(dst, src) ? cutune__expr_ev_oom(c) : 0;
}

/* Stores an evaluation result: moved when it was owned, copied when it
 * was borrowed. */
int cutune__expr_ev_take(ev_ctx *c, const node *n, cutune__value *dst,
                         cutune__value *tmp, const cutune__value *res)
{
    if (res == tmp) {
        *dst = *tmp;
        tmp->type = CUTUNE__V_NONE;
        return 0;
    }
    return cutune__expr_ev_copy(c, n->pos, n->len, dst, res);
}

/* The messages of the tree evaluator; `is_float` picks the float wording
 * where Python's differs. */
static int arith_fail(ev_ctx *c, const operand *o, int status, int is_float)
{
    switch (status) {
    case AR_OVERFLOW:
        return cutune__expr_ev_fail(c, o->pos, o->len,
                                    "integer overflow in %s", op_text[o->op]);
    case AR_DIV_ZERO:
        return cutune__expr_ev_fail(c, o->pos, o->len, "division by zero");
    case AR_MOD_ZERO:
        return cutune__expr_ev_fail(c, o->pos, o->len, "modulo by zero");
    case AR_ZERO_NEG_POW:
        return cutune__expr_ev_fail(
            c, o->pos, o->len,
            is_float ? "0.0 cannot be raised to a negative power"
                     : "0 cannot be raised to a negative power");
    case AR_NEG_FRAC_POW:
        return cutune__expr_ev_fail(c, o->pos, o->len,
                                    "negative number cannot be raised to a "
                                    "fractional power");
    case AR_FLOAT_OVERFLOW:
        return cutune__expr_ev_fail(c, o->pos, o->len, "float overflow in **");
    default: return cutune__expr_ev_fail(c, o->pos, o->len, "internal error");
    }
}

static int int_arith(ev_ctx *c, const operand *o, int64_t x, int64_t y,
                     cutune__value *out)
{
    int64_t r = 0;
    double f = 0;
    int st;
    switch (o->op) {
    case OP_ADD:
        st = __builtin_add_overflow(x, y, &r) ? AR_OVERFLOW : AR_OK;
        break;
    case OP_SUB:
        st = __builtin_sub_overflow(x, y, &r) ? AR_OVERFLOW : AR_OK;
        break;
    case OP_MUL:
        st = __builtin_mul_overflow(x, y, &r) ? AR_OVERFLOW : AR_OK;
        break;
    case OP_DIV:
        if ((st = py_truediv_int(x, y, &f)) != AR_OK)
            return arith_fail(c, o, st, 0);
        cutune__expr_set_float(out, f);
        return 0;
    case OP_FLOORDIV: st = py_floordiv(x, y, &r); break;
    case OP_MOD: st = py_mod(x, y, &r); break;
    case OP_POW:
        if (y < 0) {
            if ((st = py_ipow_neg(x, y, &f)) != AR_OK)
                return arith_fail(c, o, st, 0);
            cutune__expr_set_float(out, f);
            return 0;
        }
        st = py_ipow(x, y, &r);
        break;
    default: return cutune__expr_ev_fail(c, o->pos, o->len, "internal error");
    }
    if (st != AR_OK)
        return arith_fail(c, o, st, 0);
    cutune__expr_set_int(out, r);
    return 0;
}

static int float_arith(ev_ctx *c, const operand *o, double x, double y,
                       cutune__value *out)
{
    double r = 0;
    int st = AR_OK;
    switch (o->op) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV: st = py_truediv(x, y, &r); break;
    case OP_FLOORDIV: st = py_ffloordiv(x, y, &r); break;
    case OP_MOD: st = py_fmod(x, y, &r); break;
    case OP_POW: st = py_fpow(x, y, &r); break;
    default: return cutune__expr_ev_fail(c, o->pos, o->len, "internal error");
    }
    if (st != AR_OK)
        return arith_fail(c, o, st, 1);
    cutune__expr_set_float(out, r);
    return 0;
}

static int binop(ev_ctx *c, const operand *o, const cutune__value *a,
                 cutune__value *a_own, const cutune__value *b,
                 cutune__value *b_own, cutune__value *out)
{
    if (cutune__expr_is_intlike(a) && cutune__expr_is_intlike(b))
        return int_arith(c, o, a->u.i, b->u.i, out);
    if (cutune__expr_is_number(a) && cutune__expr_is_number(b))
        return float_arith(c, o, cutune__expr_as_double(a),
                           cutune__expr_as_double(b), out);
    if (o->op == OP_ADD && a->type == CUTUNE__V_LIST &&
        b->type == CUTUNE__V_LIST)
        return cutune__expr_list_concat(c, o, a, a_own, b, b_own, out);
    if (o->op == OP_ADD && a->type == CUTUNE__V_STR &&
        b->type == CUTUNE__V_STR) {
        size_t na = strlen(a->u.s), nb = strlen(b->u.s);
        if (cutune__expr_charge(c, o->pos, o->len, (na + nb) / sizeof *a))
            return -1;
        char *s = malloc(na + nb + 1);
        if (!s)
            return cutune__expr_ev_oom(c);
        memcpy(s, a->u.s, na);
        memcpy(s + na, b->u.s, nb + 1);
        out->type = CUTUNE__V_STR;
        out->u.s = s;
        return 0;
    }
    if (o->op == OP_MUL && cutune__expr_is_intlike(b) &&
        (a->type == CUTUNE__V_LIST || a->type == CUTUNE__V_STR))
        return cutune__expr_repeat(c, o, a, b->u.i, out);
    if (o->op == OP_MUL && cutune__expr_is_intlike(a) &&
        (b->type == CUTUNE__V_LIST || b->type == CUTUNE__V_STR))
        return cutune__expr_repeat(c, o, b, a->u.i, out);
    return cutune__expr_ev_fail(
        c, o->pos, o->len, "unsupported operand types for %s: %s and %s",
        op_text[o->op], cutune__expr_type_name(a), cutune__expr_type_name(b));
}

int cutune__expr_compare(ev_ctx *c, const operand *o, int op,
                         const cutune__value *a, const cutune__value *b,
                         int *out)
{
    int r;
    switch (op) {
    case OP_EQ: *out = cutune__value_equal(a, b); return 0;
    case OP_NE: *out = !cutune__value_equal(a, b); return 0;
    case OP_IN:
    case OP_NOTIN:
        if (b->type == CUTUNE__V_LIST) {
            r = 0;
            for (size_t i = 0; i < b->u.list.n && !r; i++)
                r = cutune__value_equal(a, &b->u.list.items[i]);
        } else if (b->type == CUTUNE__V_STR && a->type == CUTUNE__V_STR) {
            r = strstr(b->u.s, a->u.s) != NULL;
        } else if (b->type == CUTUNE__V_STR) {
            return cutune__expr_ev_fail(
                c, o->pos, o->len,
                "'in <str>' requires str as left operand, not %s",
                cutune__expr_type_name(a));
        } else {
            return cutune__expr_ev_fail(c, o->pos, o->len,
                                        "argument of type %s is not iterable",
                                        cutune__expr_type_name(b));
        }
        *out = op == OP_IN ? r : !r;
        return 0;
    default: break;
    }
    if (cutune__expr_is_number(a) && cutune__expr_is_number(b)) {
        r = cutune__expr_num_cmp(a, b);
        if (r == 2) {
            *out = 0;
            return 0;
        }
    } else if (a->type == CUTUNE__V_STR && b->type == CUTUNE__V_STR) {
        r = strcmp(a->u.s, b->u.s);
        r = r < 0 ? -1 : r > 0;
    } else if (a->type == CUTUNE__V_LIST && b->type == CUTUNE__V_LIST) {
        size_t na = a->u.list.n, nb = b->u.list.n;
        for (size_t i = 0; i < na && i < nb; i++)
            if (!cutune__value_equal(&a->u.list.items[i], &b->u.list.items[i]))
                return cutune__expr_compare(c, o, op, &a->u.list.items[i],
                                            &b->u.list.items[i], out);
        r = na < nb ? -1 : na > nb;
    } else {
        return cutune__expr_ev_fail(
            c, o->pos, o->len, "unsupported operand types for %s: %s and %s",
            op_text[op], cutune__expr_type_name(a), cutune__expr_type_name(b));
    }
    switch (op) {
    case OP_LT: *out = r < 0; break;
    case OP_LE: *out = r <= 0; break;
    case OP_GT: *out = r > 0; break;
    default: *out = r >= 0; break;
    }
    return 0;
}

static int ev_arith(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    const operand *v = n->u.chain.v;
    cutune__value acc_tmp = {0}, rhs_tmp = {0}, out;
    const cutune__value *acc, *rhs;
    if (cutune__expr_ev(c, v[0].e, &acc_tmp, &acc))
        goto fail;
    for (size_t i = 1; i < n->u.chain.n; i++) {
        if (cutune__expr_ev(c, v[i].e, &rhs_tmp, &rhs))
            goto fail;
        out.type = CUTUNE__V_NONE;
        if (binop(c, &v[i], acc, acc == &acc_tmp ? &acc_tmp : NULL, rhs,
                  rhs == &rhs_tmp ? &rhs_tmp : NULL, &out))
            goto fail;
        cutune__value_clear(&acc_tmp);
        cutune__value_clear(&rhs_tmp);
        acc_tmp = out;
        acc = &acc_tmp;
    }
    *tmp = acc_tmp;
    *res = tmp;
    return 0;
fail:
    cutune__value_clear(&acc_tmp);
    cutune__value_clear(&rhs_tmp);
    return -1;
}

static int ev_cmp(ev_ctx *c, const node *n, cutune__value *tmp,
                  const cutune__value **res)
{
    const operand *v = n->u.chain.v;
    cutune__value lt = {0}, rt = {0};
    const cutune__value *l, *r;
    int truth = 1;
    if (cutune__expr_ev(c, v[0].e, &lt, &l))
        goto fail;
    for (size_t i = 1; i < n->u.chain.n && truth; i++) {
        if (cutune__expr_ev(c, v[i].e, &rt, &r) ||
            cutune__expr_compare(c, &v[i], v[i].op, l, r, &truth))
            goto fail;
        /* The right operand is the next comparison's left one: `a < b < c`
         * evaluates b once. */
        cutune__value_clear(&lt);
        lt = rt;
        rt.type = CUTUNE__V_NONE;
        l = r == &rt ? &lt : r;
    }
    cutune__value_clear(&lt);
    cutune__expr_set_bool(tmp, truth);
    *res = tmp;
    return 0;
fail:
    cutune__value_clear(&lt);
    cutune__value_clear(&rt);
    return -1;
}

static int ev_index(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    cutune__value ct = {0}, it = {0};
    const cutune__value *cv, *iv;
    if (cutune__expr_ev(c, n->u.kid[0], &ct, &cv))
        goto fail;
    if (cutune__expr_ev(c, n->u.kid[1], &it, &iv))
        goto fail;
    size_t len;
    if (cv->type == CUTUNE__V_LIST) {
        len = cv->u.list.n;
    } else if (cv->type == CUTUNE__V_STR) {
        len = strlen(cv->u.s);
    } else {
        cutune__expr_ev_fail(c, n->pos, n->len, "%s is not subscriptable",
                             cutune__expr_type_name(cv));
        goto fail;
    }
    if (!cutune__expr_is_intlike(iv)) {
        cutune__expr_ev_fail(
            c, n->pos, n->len, "%s indices must be integers, not %s",
            cutune__expr_type_name(cv), cutune__expr_type_name(iv));
        goto fail;
    }
    int64_t i = iv->u.i;
    /* Compare in unsigned so that no length and index overflow. */
    uint64_t k = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    if ((i < 0 && k > len) || (i >= 0 && k >= len)) {
        cutune__expr_ev_fail(c, n->pos, n->len,
                             "index %lld out of range for %s of %zu",
                             (long long)i, cutune__expr_type_name(cv), len);
        goto fail;
    }
    size_t at = i < 0 ? len - (size_t)k : (size_t)k;
    if (cv->type == CUTUNE__V_STR) {
        char *s = cutune__expr_dup_bytes(cv->u.s + at, 1);
        if (!s) {
            cutune__expr_ev_oom(c);
            goto fail;
        }
        tmp->type = CUTUNE__V_STR;
        tmp->u.s = s;
        *res = tmp;
    } else if (cv == &ct) {
        /* The list dies here: keep the item by moving it out. */
        *tmp = ct.u.list.items[at];
        ct.u.list.items[at].type = CUTUNE__V_NONE;
        *res = tmp;
    } else {
        *res = &cv->u.list.items[at];
    }
    cutune__value_clear(&ct);
    cutune__value_clear(&it);
    return 0;
fail:
    cutune__value_clear(&ct);
    cutune__value_clear(&it);
    return -1;
}

int cutune__expr_ev(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    cutune__value t = {0};
    const cutune__value *v;
    switch (n->kind) {
    case N_LIT: *res = &n->u.lit; return 0;
    case N_VAR: *res = &c->vars[n->u.index]; return 0;
    case N_LOCAL: *res = c->locals[n->u.index]; return 0;
    case N_NEG:
    case N_POS:
        if (cutune__expr_ev(c, n->u.kid[0], &t, &v))
            return -1;
        if (v->type == CUTUNE__V_FLOAT) {
            cutune__expr_set_float(tmp, n->kind == N_NEG ? -v->u.f : v->u.f);
        } else if (cutune__expr_is_intlike(v)) {
            if (n->kind == N_NEG && v->u.i == INT64_MIN)
                return cutune__expr_ev_fail(c, n->pos, n->len,
                                            "integer overflow in -");
            cutune__expr_set_int(tmp, n->kind == N_NEG ? -v->u.i : v->u.i);
        } else {
            cutune__expr_ev_fail(
                c, n->pos, n->len, "bad operand type for unary %s: %s",
                n->kind == N_NEG ? "-" : "+", cutune__expr_type_name(v));
            cutune__value_clear(&t);
            return -1;
        }
        *res = tmp;
        return 0;
    case N_NOT:
        if (cutune__expr_ev(c, n->u.kid[0], &t, &v))
            return -1;
        cutune__expr_set_bool(tmp, !cutune__value_truthy(v));
        cutune__value_clear(&t);
        *res = tmp;
        return 0;
    case N_AND:
    case N_OR:
        /* Python returns the deciding operand itself, not a bool. */
        for (size_t i = 0; i < n->u.seq.n; i++) {
            cutune__value_clear(tmp);
            if (cutune__expr_ev(c, n->u.seq.v[i], tmp, res))
                return -1;
            if (cutune__value_truthy(*res) == (n->kind == N_OR))
                break;
        }
        return 0;
    case N_COND: {
        if (cutune__expr_ev(c, n->u.kid[1], &t, &v))
            return -1;
        int truth = cutune__value_truthy(v);
        cutune__value_clear(&t);
        return cutune__expr_ev(c, n->u.kid[truth ? 0 : 2], tmp, res);
    }
    case N_ARITH: return ev_arith(c, n, tmp, res);
    case N_CMP: return ev_cmp(c, n, tmp, res);
    case N_INDEX: return ev_index(c, n, tmp, res);
    case N_CALL: return cutune__expr_ev_call(c, n, tmp, res);
    case N_LIST: return cutune__expr_ev_list(c, n, tmp, res);
    case N_COMP: return cutune__expr_ev_comp(c, n, tmp, res);
    default: return cutune__expr_ev_fail(c, n->pos, n->len, "internal error");
    }
}

int cutune__expr_eval(const cutune__expr *e, const cutune__value *vars,
                      cutune__value *out, cutune__expr_error *err)
{
    return cutune__expr_eval_steps(e, vars, out, err, NULL);
}

int cutune__expr_eval_steps(const cutune__expr *e, const cutune__value *vars,
                            cutune__value *out, cutune__expr_error *err,
                            size_t *steps)
{
    cutune__expr_error dummy;
    if (!err)
        err = &dummy;
    out->type = CUTUNE__V_NONE;
    if (e->n_names && !vars) {
        cutune__expr_set_error(err, e->text, e->name_pos[0],
                               strlen(e->names[0]),
                               "no value bound to name '%s'", e->names[0]);
        return -1;
    }
    /* Comprehension variables; most expressions have none or few. */
    const cutune__value *local_buf[16];
    const cutune__value **locals = local_buf;
    if (e->n_locals > sizeof local_buf / sizeof *local_buf) {
        locals = malloc(e->n_locals * sizeof *locals);
        if (!locals) {
            cutune__expr_set_oom(err);
            return -1;
        }
    }
    ev_ctx c;
    c.e = e;
    c.vars = vars;
    c.locals = locals;
    c.err = err;
    c.budget = e->max_list > SIZE_MAX / WORK_FACTOR
                   ? SIZE_MAX
                   : e->max_list * WORK_FACTOR;
    c.steps_cap = 0;
    if (steps && *steps < c.budget) {
        c.budget = *steps;
        c.steps_cap = CUTUNE__EXPR_SPACE_STEPS;
    }
    size_t budget_at_start = c.budget;
    cutune__value tmp = {0};
    const cutune__value *res;
    int rc = cutune__expr_ev(&c, e->root, &tmp, &res);
    if (rc == 0 && res == &tmp) {
        *out = tmp;
        tmp.type = CUTUNE__V_NONE;
    } else if (rc == 0 && cutune__value_copy(out, res) != 0) {
        rc = cutune__expr_ev_oom(&c);
    }
    cutune__value_clear(&tmp);
    if (locals != local_buf)
        free(locals);
    if (steps)
        *steps -= budget_at_start - c.budget;
    return rc;
}

int cutune__expr_eval_const(const char *text, cutune__value *out,
                            cutune__expr_error *err)
{
    out->type = CUTUNE__V_NONE;
    cutune__expr *e = cutune__expr_parse(text, 0, err);
    if (!e)
        return -1;
    int rc;
    if (e->n_names) {
        cutune__expr_set_error(err, e->text, e->name_pos[0],
                               strlen(e->names[0]), "name '%s' is not defined",
                               e->names[0]);
        rc = -1;
    } else {
        rc = cutune__expr_eval(e, NULL, out, err);
    }
    cutune__expr_free(e);
    return rc;
}
