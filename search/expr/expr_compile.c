/* Compiles a T1 expression into a flat program over numeric slots
 * (expr.h says what programs cover); constant subexpressions are folded
 * with the tree evaluator, so both give the same values. */
#include "expr_internal.h"

/* A compiled subexpression: where its value is and of what type; TY_OBJ is
 * a constant that is no number (a list for `in`), borrowed. */
typedef struct fval {
    unsigned slot;
    int type;
    const cutune__value *obj;
} fval;

/* During compilation constant k is slot CONST_TAG - k, renumbered at the
 * end to follow the temporaries. */
#define CONST_TAG       0xFFFFu
#define FPROG_MAX_SLOTS 0x8000u

typedef struct fcomp {
    const cutune__expr *e;
    const cutune__vtype *types;
    const cutune__value *const *constants;
    finsn *code;
    size_t n_code, cap_code;
    cutune__slot *consts;
    size_t n_consts, cap_consts;
    ftable *tables;
    size_t n_tables, cap_tables;
    unsigned max_temp; /* one past the highest temporary used */
    /* Folding constant subexpressions with the tree evaluator. */
    ev_ctx fold;
    cutune__value *fold_vars;
    cutune__expr_error fold_err;
    cutune__value *owned; /* folded results that are no numbers */
    size_t n_owned, cap_owned;
} fcomp;

static void *grow_array(void *v, size_t n, size_t *cap, size_t elsize)
{
    if (n < *cap)
        return v;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *nv = realloc(v, ncap * elsize);
    if (nv)
        *cap = ncap;
    return nv;
}

/* Appends an instruction; returns its position, or CUTUNE__NONE. */
static size_t f_emit(fcomp *f, int op, unsigned dst, unsigned a, unsigned b)
{
    finsn *code = grow_array(f->code, f->n_code, &f->cap_code, sizeof *code);
    if (!code)
        return CUTUNE__NONE;
    f->code = code;
    finsn *in = &code[f->n_code];
    in->op = (uint8_t)op;
    in->cmp = 0;
    in->dst = (uint16_t)dst;
    in->a = (uint16_t)a;
    in->b = (uint16_t)b;
    in->arg = 0;
    if (dst >= f->max_temp && dst < CONST_TAG - FPROG_MAX_SLOTS)
        f->max_temp = dst + 1;
    return f->n_code++;
}

static int f_temp_ok(unsigned tmp)
{
    /* Leaves room above for what one node uses. */
    return tmp + 4 < FPROG_MAX_SLOTS ? 0 : -1;
}

static int f_const(fcomp *f, const cutune__value *v, fval *out)
{
    cutune__slot s;
    int type;
    if (v->type == CUTUNE__V_INT || v->type == CUTUNE__V_BOOL) {
        s.i = v->u.i;
        type = v->type == CUTUNE__V_INT ? TY_INT : TY_BOOL;
    } else if (v->type == CUTUNE__V_FLOAT) {
        s.f = v->u.f;
        type = TY_FLOAT;
    } else {
        out->slot = 0;
        out->type = TY_OBJ;
        out->obj = v;
        return 0;
    }
    if (f->n_consts >= FPROG_MAX_SLOTS)
        return -1;
    cutune__slot *c =
        grow_array(f->consts, f->n_consts, &f->cap_consts, sizeof *c);
    if (!c)
        return -1;
    f->consts = c;
    f->consts[f->n_consts] = s;
    out->slot = CONST_TAG - (unsigned)f->n_consts++;
    out->type = type;
    out->obj = NULL;
    return 0;
}

static int f_const_int(fcomp *f, int64_t i, fval *out)
{
    cutune__value v;
    v.type = CUTUNE__V_INT;
    v.u.i = i;
    return f_const(f, &v, out);
}

/* The value of a constant slot, or NULL for any other slot. */
static const cutune__slot *f_const_value(const fcomp *f, unsigned slot)
{
    if (slot > CONST_TAG - FPROG_MAX_SLOTS && CONST_TAG - slot < f->n_consts)
        return &f->consts[CONST_TAG - slot];
    return NULL;
}

/* 1 when n names no variable, so it can be evaluated once. */
static int f_is_const(const fcomp *f, const node *n)
{
    switch (n->kind) {
    case N_LIT:
    case N_LOCAL: return 1;
    case N_VAR: return f->constants && f->constants[n->u.index];
    case N_NEG:
    case N_POS:
    case N_NOT: return f_is_const(f, n->u.kid[0]);
    case N_INDEX:
        return f_is_const(f, n->u.kid[0]) && f_is_const(f, n->u.kid[1]);
    case N_COND:
        return f_is_const(f, n->u.kid[0]) && f_is_const(f, n->u.kid[1]) &&
               f_is_const(f, n->u.kid[2]);
    case N_ARITH:
    case N_CMP:
        for (size_t i = 0; i < n->u.chain.n; i++)
            if (!f_is_const(f, n->u.chain.v[i].e))
                return 0;
        return 1;
    case N_AND:
    case N_OR:
    case N_LIST:
    case N_CALL:
        for (size_t i = 0; i < n->u.seq.n; i++)
            if (!f_is_const(f, n->u.seq.v[i]))
                return 0;
        return 1;
    case N_COMP:
        if (!f_is_const(f, n->u.comp.elem))
            return 0;
        for (size_t i = 0; i < n->u.comp.n; i++)
            if (!f_is_const(f, n->u.comp.v[i].e))
                return 0;
        return 1;
    default: return 0;
    }
}

/* Evaluates a constant subexpression with the tree evaluator. One budget
 * covers every folded part, so that no evaluation of the whole could build
 * more than the tree evaluator allows. A failure declines the expression:
 * its error is the tree evaluator's to report, when it is reached. */
static int f_fold(fcomp *f, const node *n, fval *out)
{
    cutune__value t = {0};
    const cutune__value *res;
    if (cutune__expr_ev(&f->fold, n, &t, &res))
        return -1;
    if (res != &t)
        return f_const(f, res, out); /* lives in the tree or the caller's */
    if (t.type == CUTUNE__V_INT || t.type == CUTUNE__V_BOOL ||
        t.type == CUTUNE__V_FLOAT)
        return f_const(f, &t, out);
    cutune__value *owned =
        grow_array(f->owned, f->n_owned, &f->cap_owned, sizeof *owned);
    if (!owned) {
        cutune__value_clear(&t);
        return -1;
    }
    f->owned = owned;
    owned[f->n_owned] = t;
    return f_const(f, &owned[f->n_owned++], out);
}

static int is_intlike_type(int type)
{
    return type == TY_INT || type == TY_BOOL;
}

/* Puts v's truth into slot dst as an int that is nonzero when v is truthy
 * (a copy for int and bool, 0/1 for float and constant objects). */
static int f_truth_to(fcomp *f, const fval *v, unsigned dst)
{
    if (v->type == TY_OBJ) {
        fval c;
        if (f_const_int(f, cutune__value_truthy(v->obj), &c))
            return -1;
        return f_emit(f, F_MOV, dst, c.slot, 0) == CUTUNE__NONE ? -1 : 0;
    }
    if (v->type == TY_FLOAT)
        return f_emit(f, F_TRUTH_F, dst, v->slot, 0) == CUTUNE__NONE ? -1 : 0;
    if (v->slot == dst)
        return 0;
    return f_emit(f, F_MOV, dst, v->slot, 0) == CUTUNE__NONE ? -1 : 0;
}

static int f_move_to(fcomp *f, const fval *v, unsigned dst)
{
    if (v->slot == dst)
        return 0;
    return f_emit(f, F_MOV, dst, v->slot, 0) == CUTUNE__NONE ? -1 : 0;
}

/* Sets the jump target of instruction `at` to the next instruction. */
static void f_patch(fcomp *f, size_t at)
{
    f->code[at].arg = (uint32_t)f->n_code;
}

static int f_node(fcomp *f, const node *n, int truth, unsigned tmp, fval *out);

/* and / or. Value: every operand must have the same type, since Python
 * returns the deciding operand. Truth: each operand's truth is enough. */
static int f_bool_chain(fcomp *f, const node *n, int truth, unsigned tmp,
                        fval *out)
{
    size_t np = n->u.seq.n;
    size_t *exits = malloc(np * sizeof *exits);
    int type = 0, rc = -1;
    if (!exits)
        return -1;
    for (size_t i = 0; i < np; i++) {
        fval v;
        if (f_node(f, n->u.seq.v[i], truth, tmp, &v))
            goto out;
        if (truth) {
            if (f_truth_to(f, &v, tmp))
                goto out;
            type = TY_INT;
        } else {
            if (v.type == TY_OBJ || (type && v.type != type))
                goto out;
            type = v.type;
            if (f_move_to(f, &v, tmp))
                goto out;
        }
        if (i + 1 < np) {
            int op = type == TY_FLOAT ? (n->kind == N_AND ? F_JZ_F : F_JNZ_F)
                                      : (n->kind == N_AND ? F_JZ_I : F_JNZ_I);
            if ((exits[i] = f_emit(f, op, 0, tmp, 0)) == CUTUNE__NONE)
                goto out;
        }
    }
    for (size_t i = 0; i + 1 < np; i++)
        f_patch(f, exits[i]);
    out->slot = tmp;
    out->type = type;
    out->obj = NULL;
    rc = 0;
out:
    free(exits);
    return rc;
}

static int f_cond(fcomp *f, const node *n, int truth, unsigned tmp, fval *out)
{
    fval c, a, b;
    if (f_node(f, n->u.kid[1], 1, tmp, &c))
        return -1;
    if (c.type == TY_OBJ) {
        /* A constant condition: only one branch can ever run. */
        return f_node(f, n->u.kid[cutune__value_truthy(c.obj) ? 0 : 2], truth,
                      tmp, out);
    }
    size_t to_else =
        f_emit(f, c.type == TY_FLOAT ? F_JZ_F : F_JZ_I, 0, c.slot, 0);
    if (to_else == CUTUNE__NONE || f_node(f, n->u.kid[0], truth, tmp, &a))
        return -1;
    int type = a.type;
    if (truth) {
        if (f_truth_to(f, &a, tmp))
            return -1;
        type = TY_INT;
    } else if (a.type == TY_OBJ || f_move_to(f, &a, tmp)) {
        return -1;
    }
    size_t to_end = f_emit(f, F_JMP, 0, 0, 0);
    if (to_end == CUTUNE__NONE)
        return -1;
    f_patch(f, to_else);
    if (f_node(f, n->u.kid[2], truth, tmp, &b))
        return -1;
    if (truth) {
        if (f_truth_to(f, &b, tmp))
            return -1;
    } else if (b.type != type || f_move_to(f, &b, tmp)) {
        return -1;
    }
    f_patch(f, to_end);
    out->slot = tmp;
    out->type = type;
    out->obj = NULL;
    return 0;
}

/* Converts an int operand to float in slot `dst`. */
static int f_to_float(fcomp *f, fval *v, unsigned dst)
{
    if (v->type == TY_FLOAT)
        return 0;
    if (f_emit(f, F_I2F, dst, v->slot, 0) == CUTUNE__NONE)
        return -1;
    v->slot = dst;
    v->type = TY_FLOAT;
    return 0;
}

static int f_arith(fcomp *f, const node *n, unsigned tmp, fval *out)
{
    const operand *v = n->u.chain.v;
    fval l, r;
    if (f_node(f, v[0].e, 0, tmp, &l) || l.type == TY_OBJ)
        return -1;
    for (size_t i = 1; i < n->u.chain.n; i++) {
        if (f_node(f, v[i].e, 0, tmp + 1, &r) || r.type == TY_OBJ)
            return -1;
        int op, type;
        if (is_intlike_type(l.type) && is_intlike_type(r.type)) {
            type = TY_INT;
            switch (v[i].op) {
            case OP_ADD: op = F_ADD_I; break;
            case OP_SUB: op = F_SUB_I; break;
            case OP_MUL: op = F_MUL_I; break;
            case OP_DIV:
                op = F_TDIV_I;
                type = TY_FLOAT;
                break;
            case OP_FLOORDIV: op = F_FDIV_I; break;
            case OP_MOD: op = F_MOD_I; break;
            case OP_POW: {
                const cutune__slot *k = f_const_value(f, r.slot);
                op = F_POW_I;
                if (k && k->i < 0) {
                    op = F_POWNEG_I;
                    type = TY_FLOAT;
                }
                break;
            }
            default: return -1;
            }
        } else {
            if (f_to_float(f, &l, tmp) || f_to_float(f, &r, tmp + 1))
                return -1;
            type = TY_FLOAT;
            switch (v[i].op) {
            case OP_ADD: op = F_ADD_F; break;
            case OP_SUB: op = F_SUB_F; break;
            case OP_MUL: op = F_MUL_F; break;
            case OP_DIV: op = F_TDIV_F; break;
            case OP_FLOORDIV: op = F_FDIV_F; break;
            case OP_MOD: op = F_MOD_F; break;
            case OP_POW: op = F_POW_F; break;
            default: return -1;
            }
        }
        if (f_emit(f, op, tmp, l.slot, r.slot) == CUTUNE__NONE)
            return -1;
        l.slot = tmp;
        l.type = type;
    }
    *out = l;
    return 0;
}

/* Longer constant lists stay with the tree evaluator. */
#define FTABLE_MAX 4096

static int int64_order(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A membership table from a constant list; returns its index, or -1. */
static long f_table(fcomp *f, const cutune__value *list)
{
    if (list->u.list.n > FTABLE_MAX)
        return -1;
    ftable *t = grow_array(f->tables, f->n_tables, &f->cap_tables, sizeof *t);
    if (!t)
        return -1;
    f->tables = t;
    t = &t[f->n_tables];
    memset(t, 0, sizeof *t);
    size_t n = list->u.list.n;
    t->ints = malloc((n ? n : 1) * sizeof *t->ints);
    t->floats = malloc((n ? n : 1) * sizeof *t->floats);
    if (!t->ints || !t->floats) {
        free(t->ints);
        free(t->floats);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const cutune__value *it = &list->u.list.items[i];
        if (cutune__expr_is_intlike(it))
            t->ints[t->n_ints++] = it->u.i;
        else if (it->type == CUTUNE__V_FLOAT)
            t->floats[t->n_floats++] = it->u.f;
    }
    qsort(t->ints, t->n_ints, sizeof *t->ints, int64_order);
    return (long)f->n_tables++;
}

static int f_compare(fcomp *f, int op, unsigned dst, const fval *l,
                     const fval *r)
{
    size_t at;
    if (op == OP_IN || op == OP_NOTIN) {
        if (l->type == TY_OBJ || r->type != TY_OBJ ||
            r->obj->type != CUTUNE__V_LIST)
            return -1;
        long t = f_table(f, r->obj);
        if (t < 0)
            return -1;
        at = f_emit(f, l->type == TY_FLOAT ? F_IN_F : F_IN_I, dst, l->slot, 0);
        if (at == CUTUNE__NONE)
            return -1;
        f->code[at].arg = (uint32_t)t;
        f->code[at].cmp = op == OP_NOTIN;
        return 0;
    }
    if (l->type == TY_OBJ || r->type == TY_OBJ)
        return -1;
    int li = is_intlike_type(l->type), ri = is_intlike_type(r->type);
    if (li && ri) {
        static const int ii[] = {
            [OP_EQ] = F_EQ_II, [OP_NE] = F_NE_II, [OP_LT] = F_LT_II,
            [OP_LE] = F_LE_II, [OP_GT] = F_GT_II, [OP_GE] = F_GE_II};
        return f_emit(f, ii[op], dst, l->slot, r->slot) == CUTUNE__NONE ? -1
                                                                        : 0;
    }
    at = f_emit(f,
                li   ? F_CMP_IF
                : ri ? F_CMP_FI
                     : F_CMP_FF,
                dst, l->slot, r->slot);
    if (at == CUTUNE__NONE)
        return -1;
    f->code[at].cmp = (uint8_t)op;
    return 0;
}

/* A comparison chain: `a < b < c` evaluates b once and c only when a < b. */
static int f_cmp(fcomp *f, const node *n, unsigned tmp, fval *out)
{
    const operand *v = n->u.chain.v;
    size_t nc = n->u.chain.n;
    size_t *exits = malloc(nc * sizeof *exits);
    size_t n_exits = 0;
    fval l, r;
    int rc = -1;
    if (!exits)
        return -1;
    if (f_node(f, v[0].e, 0, tmp + 1, &l))
        goto out;
    for (size_t i = 1; i < nc; i++) {
        if (f_node(f, v[i].e, 0, tmp + 2, &r) ||
            f_compare(f, v[i].op, tmp, &l, &r))
            goto out;
        if (i + 1 == nc)
            break;
        if ((exits[n_exits++] = f_emit(f, F_JZ_I, 0, tmp, 0)) == CUTUNE__NONE)
            goto out;
        if (r.type != TY_OBJ && r.slot == tmp + 2) {
            if (f_emit(f, F_MOV, tmp + 1, tmp + 2, 0) == CUTUNE__NONE)
                goto out;
            r.slot = tmp + 1;
        }
        l = r;
    }
    for (size_t i = 0; i < n_exits; i++)
        f_patch(f, exits[i]);
    out->slot = tmp;
    out->type = TY_BOOL;
    out->obj = NULL;
    rc = 0;
out:
    free(exits);
    return rc;
}

/* max(a, b, ...) and min(...) of numbers of one type: the first of equal
 * ones wins, and NaN never compares better. */
static int f_minmax(fcomp *f, const node *n, unsigned tmp, fval *out)
{
    fval first, v;
    if (n->u.seq.n < 2 || f_node(f, n->u.seq.v[0], 0, tmp, &first) ||
        first.type == TY_OBJ || f_move_to(f, &first, tmp))
        return -1;
    int is_max = n->fn == B_MAX, flt = first.type == TY_FLOAT;
    int op = flt ? (is_max ? F_MAX_F : F_MIN_F) : (is_max ? F_MAX_I : F_MIN_I);
    for (size_t i = 1; i < n->u.seq.n; i++) {
        if (f_node(f, n->u.seq.v[i], 0, tmp + 1, &v) || v.type != first.type ||
            f_emit(f, op, tmp, tmp, v.slot) == CUTUNE__NONE)
            return -1;
    }
    out->slot = tmp;
    out->type = first.type;
    out->obj = NULL;
    return 0;
}

/* Compiles n with temporaries from `tmp` up; the value ends up in
 * out->slot, which is `tmp`, a variable's or a constant's slot. `truth`:
 * only the value's truth will be used. */
static int f_node(fcomp *f, const node *n, int truth, unsigned tmp, fval *out)
{
    if (f_temp_ok(tmp))
        return -1;
    switch (n->kind) {
    case N_LIT: return f_const(f, &n->u.lit, out);
    case N_VAR: {
        size_t i = n->u.index;
        if (f->constants && f->constants[i])
            return f_const(f, f->constants[i], out);
        cutune__vtype t = f->types[i];
        out->slot = (unsigned)i;
        out->obj = NULL;
        out->type = t == CUTUNE__V_INT     ? TY_INT
                    : t == CUTUNE__V_BOOL  ? TY_BOOL
                    : t == CUTUNE__V_FLOAT ? TY_FLOAT
                                           : 0;
        return out->type ? 0 : -1;
    }
    case N_LOCAL: return -1; /* only inside a comprehension, folded whole */
    default: break;
    }
    if (f_is_const(f, n))
        return f_fold(f, n, out);
    fval v;
    switch (n->kind) {
    case N_NEG:
    case N_POS:
        if (f_node(f, n->u.kid[0], 0, tmp, &v) || v.type == TY_OBJ)
            return -1;
        if (n->kind == N_POS) {
            *out = v;
            if (v.type == TY_BOOL)
                out->type = TY_INT;
            return 0;
        }
        if (f_emit(f, v.type == TY_FLOAT ? F_NEG_F : F_NEG_I, tmp, v.slot,
                   0) == CUTUNE__NONE)
            return -1;
        out->slot = tmp;
        out->type = v.type == TY_FLOAT ? TY_FLOAT : TY_INT;
        out->obj = NULL;
        return 0;
    case N_NOT:
        if (f_node(f, n->u.kid[0], 1, tmp, &v) || v.type == TY_OBJ ||
            f_emit(f, v.type == TY_FLOAT ? F_NOT_F : F_NOT_I, tmp, v.slot,
                   0) == CUTUNE__NONE)
            return -1;
        out->slot = tmp;
        out->type = TY_BOOL;
        out->obj = NULL;
        return 0;
    case N_AND:
    case N_OR: return f_bool_chain(f, n, truth, tmp, out);
    case N_COND: return f_cond(f, n, truth, tmp, out);
    case N_ARITH: return f_arith(f, n, tmp, out);
    case N_CMP: return f_cmp(f, n, tmp, out);
    case N_CALL:
        if (n->fn == B_MAX || n->fn == B_MIN)
            return f_minmax(f, n, tmp, out);
        return -1;
    default: return -1;
    }
}

static void prog_free_tables(ftable *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].ints);
        free(t[i].floats);
    }
    free(t);
}

void cutune__expr_prog_free(cutune__expr_prog *g)
{
    if (!g)
        return;
    free(g->code);
    free(g->consts);
    prog_free_tables(g->tables, g->n_tables);
    free(g);
}

/* Renumbers constant slots to follow the temporaries. */
static unsigned f_final_slot(unsigned slot, size_t const_base)
{
    if (slot > CONST_TAG - FPROG_MAX_SLOTS)
        return (unsigned)(const_base + (CONST_TAG - slot));
    return slot;
}

cutune__expr_prog *cutune__expr_compile(const cutune__expr *e,
                                        const cutune__vtype *types,
                                        const cutune__value *const *constants,
                                        cutune__prog_mode mode)
{
    fcomp f;
    cutune__expr_prog *g = NULL;
    const cutune__value **locals = NULL;
    if (!e || (e->n_names && !types) || e->n_names >= FPROG_MAX_SLOTS / 2)
        return NULL;
    memset(&f, 0, sizeof f);
    f.e = e;
    f.types = types;
    f.constants = constants;
    f.fold_vars = calloc(e->n_names ? e->n_names : 1, sizeof *f.fold_vars);
    locals = calloc(e->n_locals ? e->n_locals : 1, sizeof *locals);
    if (!f.fold_vars || !locals)
        goto out;
    for (size_t i = 0; i < e->n_names; i++)
        if (constants && constants[i])
            f.fold_vars[i] = *constants[i]; /* shallow: read only here */
    f.fold.e = e;
    f.fold.vars = f.fold_vars;
    f.fold.locals = locals;
    f.fold.err = &f.fold_err;
    f.fold.budget = e->max_list > SIZE_MAX / WORK_FACTOR
                        ? SIZE_MAX
                        : e->max_list * WORK_FACTOR;
    f.max_temp = (unsigned)e->n_names;

    fval res;
    int truth = mode == CUTUNE__PROG_TRUTH;
    if (f_node(&f, e->root, truth, (unsigned)e->n_names, &res))
        goto out;
    if (res.type == TY_OBJ) {
        if (!truth || f_const_int(&f, cutune__value_truthy(res.obj), &res))
            goto out;
    }
    size_t const_base = f.max_temp;
    if (const_base + f.n_consts > FPROG_MAX_SLOTS)
        goto out;
    g = calloc(1, sizeof *g);
    if (!g)
        goto out;
    g->mode = mode;
    g->const_base = const_base;
    g->n_slots = const_base + f.n_consts;
    g->n_consts = f.n_consts;
    g->consts = f.consts;
    f.consts = NULL;
    g->tables = f.tables;
    g->n_tables = f.n_tables;
    f.tables = NULL;
    f.n_tables = 0;
    g->code = f.code;
    g->n_code = f.n_code;
    f.code = NULL;
    for (size_t i = 0; i < g->n_code; i++) {
        finsn *in = &g->code[i];
        in->dst = (uint16_t)f_final_slot(in->dst, const_base);
        in->a = (uint16_t)f_final_slot(in->a, const_base);
        in->b = (uint16_t)f_final_slot(in->b, const_base);
    }
    g->result = f_final_slot(res.slot, const_base);
    g->result_type = res.type;
out:
    for (size_t i = 0; i < f.n_owned; i++)
        cutune__value_clear(&f.owned[i]);
    free(f.owned);
    free(f.code);
    free(f.consts);
    prog_free_tables(f.tables, f.n_tables);
    free(f.fold_vars);
    free(locals);
    return g;
}
