/* Runs compiled T1 programs. Kept apart from the compiler because this is
 * the loop that runs once per candidate configuration. */
#include "expr_arith.h"
#include "expr_internal.h"

size_t cutune__expr_prog_slot_count(const cutune__expr_prog *g)
{
    return g ? g->n_slots : 0;
}

void cutune__expr_prog_init_slots(const cutune__expr_prog *g,
                                  cutune__slot *slots)
{
    if (g && g->n_consts)
        memcpy(slots + g->const_base, g->consts, g->n_consts * sizeof *slots);
}

/* Python's ==, <, ... between numbers of known types, through the same
 * comparison as the tree evaluator (exact between int and float). */
static int slot_cmp(int op, int r)
{
    if (r == 2) /* NaN */
        return op == OP_NE;
    switch (op) {
    case OP_EQ: return r == 0;
    case OP_NE: return r != 0;
    case OP_LT: return r < 0;
    case OP_LE: return r <= 0;
    case OP_GT: return r > 0;
    default: return r >= 0;
    }
}

static int float_cmp(double a, double b)
{
    if (isnan(a) || isnan(b))
        return 2;
    return a < b ? -1 : a > b;
}

static int in_table(const ftable *t, int is_float, cutune__slot x)
{
    if (is_float) {
        for (size_t k = 0; k < t->n_floats; k++)
            if (float_cmp(x.f, t->floats[k]) == 0)
                return 1;
        for (size_t k = 0; k < t->n_ints; k++)
            if (cutune__expr_cmp_int_float(t->ints[k], x.f) == 0)
                return 1;
        return 0;
    }
    size_t lo = 0, hi = t->n_ints;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ints[mid] < x.i)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n_ints && t->ints[lo] == x.i)
        return 1;
    for (size_t k = 0; k < t->n_floats; k++)
        if (cutune__expr_cmp_int_float(x.i, t->floats[k]) == 0)
            return 1;
    return 0;
}

/* The arithmetic instructions, F_ADD_I to F_NEG_F: 0, or -1 where the
 * tree evaluator would fail. */
static inline int run_arith(const finsn *in, cutune__slot a, cutune__slot b,
                            cutune__slot *d)
{
    switch (in->op) {
    case F_ADD_I:
        if (__builtin_add_overflow(a.i, b.i, &d->i))
            return -1;
        break;
    case F_SUB_I:
        if (__builtin_sub_overflow(a.i, b.i, &d->i))
            return -1;
        break;
    case F_MUL_I:
        if (__builtin_mul_overflow(a.i, b.i, &d->i))
            return -1;
        break;
    case F_TDIV_I:
        if (py_truediv_int(a.i, b.i, &d->f) != AR_OK)
            return -1;
        break;
    case F_FDIV_I:
        if (py_floordiv(a.i, b.i, &d->i) != AR_OK)
            return -1;
        break;
    case F_MOD_I:
        if (py_mod(a.i, b.i, &d->i) != AR_OK)
            return -1;
        break;
    case F_POW_I:
        if (b.i < 0 || py_ipow(a.i, b.i, &d->i) != AR_OK)
            return -1;
        break;
    case F_POWNEG_I:
        if (py_ipow_neg(a.i, b.i, &d->f) != AR_OK)
            return -1;
        break;
    case F_ADD_F: d->f = a.f + b.f; break;
    case F_SUB_F: d->f = a.f - b.f; break;
    case F_MUL_F: d->f = a.f * b.f; break;
    case F_TDIV_F:
        if (py_truediv(a.f, b.f, &d->f) != AR_OK)
            return -1;
        break;
    case F_FDIV_F:
        if (py_ffloordiv(a.f, b.f, &d->f) != AR_OK)
            return -1;
        break;
    case F_MOD_F:
        if (py_fmod(a.f, b.f, &d->f) != AR_OK)
            return -1;
        break;
    case F_POW_F:
        if (py_fpow(a.f, b.f, &d->f) != AR_OK)
            return -1;
        break;
    case F_NEG_I:
        if (a.i == INT64_MIN)
            return -1;
        d->i = -a.i;
        break;
    case F_NEG_F: d->f = -a.f; break;
    default: return -1;
    }
    return 0;
}

/* Runs the program: 0, or -1 where the tree evaluator would fail or the
 * result's type differs from the static one. */
static int prog_run(const cutune__expr_prog *g, cutune__slot *s)
{
    const finsn *code = g->code;
    size_t n = g->n_code;
    for (size_t pc = 0; pc < n; pc++) {
        const finsn *in = &code[pc];
        cutune__slot *d = &s[in->dst];
        const cutune__slot a = s[in->a], b = s[in->b];
        switch (in->op) {
        case F_ADD_I:
        case F_SUB_I:
        case F_MUL_I:
        case F_TDIV_I:
        case F_FDIV_I:
        case F_MOD_I:
        case F_POW_I:
        case F_POWNEG_I:
        case F_ADD_F:
        case F_SUB_F:
        case F_MUL_F:
        case F_TDIV_F:
        case F_FDIV_F:
        case F_MOD_F:
        case F_POW_F:
        case F_NEG_I:
        case F_NEG_F:
            if (run_arith(in, a, b, d))
                return -1;
            break;
        case F_I2F: d->f = (double)a.i; break;
        case F_MOV: *d = a; break;
        case F_NOT_I: d->i = a.i == 0; break;
        case F_NOT_F: d->i = a.f == 0.0; break;
        case F_TRUTH_F: d->i = a.f != 0.0; break;
        case F_EQ_II: d->i = a.i == b.i; break;
        case F_NE_II: d->i = a.i != b.i; break;
        case F_LT_II: d->i = a.i < b.i; break;
        case F_LE_II: d->i = a.i <= b.i; break;
        case F_GT_II: d->i = a.i > b.i; break;
        case F_GE_II: d->i = a.i >= b.i; break;
        case F_CMP_IF:
            d->i = slot_cmp(in->cmp, cutune__expr_cmp_int_float(a.i, b.f));
            break;
        case F_CMP_FI: {
            int r = cutune__expr_cmp_int_float(b.i, a.f);
            d->i = slot_cmp(in->cmp, r == 2 ? 2 : -r);
            break;
        }
        case F_CMP_FF: d->i = slot_cmp(in->cmp, float_cmp(a.f, b.f)); break;
        case F_IN_I:
        case F_IN_F:
            d->i =
                in_table(&g->tables[in->arg], in->op == F_IN_F, a) != in->cmp;
            break;
        case F_MAX_I:
            if (b.i > a.i)
                *d = b;
            break;
        case F_MIN_I:
            if (b.i < a.i)
                *d = b;
            break;
        case F_MAX_F:
            if (b.f > a.f)
                *d = b;
            break;
        case F_MIN_F:
            if (b.f < a.f)
                *d = b;
            break;
        case F_JMP: pc = (size_t)in->arg - 1; break;
        case F_JZ_I:
            if (a.i == 0)
                pc = (size_t)in->arg - 1;
            break;
        case F_JNZ_I:
            if (a.i != 0)
                pc = (size_t)in->arg - 1;
            break;
        case F_JZ_F:
            if (a.f == 0.0)
                pc = (size_t)in->arg - 1;
            break;
        case F_JNZ_F:
            if (a.f != 0.0)
                pc = (size_t)in->arg - 1;
            break;
        default: return -1;
        }
    }
    return 0;
}

int cutune__expr_prog_truth(const cutune__expr_prog *g, cutune__slot *slots)
{
    if (prog_run(g, slots))
        return -1;
    const cutune__slot r = slots[g->result];
    return g->result_type == TY_FLOAT ? r.f != 0.0 : r.i != 0;
}

int cutune__expr_prog_eval(const cutune__expr_prog *g, cutune__slot *slots,
                           cutune__value *out)
{
    out->type = CUTUNE__V_NONE;
    if (g->mode != CUTUNE__PROG_VALUE || prog_run(g, slots))
        return -1;
    const cutune__slot r = slots[g->result];
    if (g->result_type == TY_FLOAT)
        cutune__expr_set_float(out, r.f);
    else if (g->result_type == TY_BOOL)
        cutune__expr_set_bool(out, r.i != 0);
    else
        cutune__expr_set_int(out, r.i);
    return 0;
}
