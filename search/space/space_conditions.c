/* The conditions of a search space, prepared for enumeration: compiled to
 * programs where they can be, memoised over few parameters, sorted into the
 * depth at which they are complete. space_enum.c checks them. */
#include "space_internal.h"

void cutune__space_free_conditions(prepared_condition *conds, size_t n)
{
    if (!conds)
        return;
    for (size_t c = 0; c < n; c++) {
        free(conds[c].vars);
        free(conds[c].param_of);
        cutune__expr_prog_free(conds[c].prog);
        free(conds[c].slots);
        free(conds[c].bound);
        free(conds[c].memo);
        free(conds[c].memo_index);
    }
    free(conds);
}

/* The values of each parameter as program slots, where they are numbers of
 * one type. Returns -1 when memory ran out. */
int cutune__space_prepare_params(builder *b)
{
    const cutune__space *s = b->s;
    size_t np = s->n_params;
    b->ptype = calloc(np ? np : 1, sizeof *b->ptype);
    b->pslot = calloc(np ? np : 1, sizeof *b->pslot);
    if (!b->ptype || !b->pslot)
        return -1;
    for (size_t p = 0; p < np; p++) {
        size_t nv = s->n_values[p];
        cutune__vtype t = nv ? s->values[p][0].type : CUTUNE__V_NONE;
        for (size_t v = 0; v < nv; v++)
            if (s->values[p][v].type != t)
                t = CUTUNE__V_NONE;
        if (t != CUTUNE__V_INT && t != CUTUNE__V_BOOL && t != CUTUNE__V_FLOAT)
            continue;
        cutune__slot *slot = malloc(nv * sizeof *slot);
        if (!slot)
            return -1;
        for (size_t v = 0; v < nv; v++) {
            if (t == CUTUNE__V_FLOAT)
                slot[v].f = s->values[p][v].u.f;
            else
                slot[v].i = s->values[p][v].u.i;
        }
        b->pslot[p] = slot;
        b->ptype[p] = t;
    }
    return 0;
}

void cutune__space_free_params(builder *b)
{
    if (b->pslot)
        for (size_t p = 0; p < b->s->n_params; p++)
            free(b->pslot[p]);
    free(b->pslot);
    free(b->ptype);
}

/* Compiles a condition whose names are all typed parameters or constants;
 * leaves pc->prog NULL otherwise. Returns -1 when memory ran out. */
static int compile_condition(builder *b, prepared_condition *pc)
{
    size_t nn = pc->n_names;
    cutune__vtype *types = calloc(nn ? nn : 1, sizeof *types);
    const cutune__value **consts = calloc(nn ? nn : 1, sizeof *consts);
    int rc = -1;
    if (!types || !consts)
        goto out;
    for (size_t i = 0; i < nn; i++) {
        size_t p = pc->param_of[i];
        if (p == CUTUNE__NONE) {
            consts[i] = &pc->vars[i];
            continue;
        }
        if (b->ptype[p] == CUTUNE__V_NONE) {
            rc = 0;
            goto out;
        }
        types[i] = b->ptype[p];
        pc->n_bound++;
    }
    /* NULL also for an expression outside what programs cover. */
    pc->prog =
        cutune__expr_compile(pc->expr, types, consts, CUTUNE__PROG_TRUTH);
    if (!pc->prog) {
        pc->n_bound = 0;
        rc = 0;
        goto out;
    }
    pc->slots =
        calloc(cutune__expr_prog_slot_count(pc->prog), sizeof *pc->slots);
    pc->bound = calloc(pc->n_bound ? 2 * pc->n_bound : 1, sizeof *pc->bound);
    if (!pc->slots || !pc->bound)
        goto out;
    cutune__expr_prog_init_slots(pc->prog, pc->slots);
    for (size_t i = 0, k = 0; i < nn; i++) {
        if (pc->param_of[i] == CUTUNE__NONE)
            continue;
        pc->bound[2 * k] = (uint32_t)i;
        pc->bound[2 * k + 1] = (uint32_t)pc->param_of[i];
        k++;
    }
    rc = 0;
out:
    free(types);
    free(consts);
    return rc;
}

/* Sets up the memo of a condition whose parameters have at most MEMO_MAX
 * combinations of values. Returns -1 when memory ran out. */
static int prepare_memo(builder *b, prepared_condition *pc)
{
    const cutune__space *s = b->s;
    size_t combos = 1, n = 0;
    for (size_t i = 0; i < pc->n_names; i++) {
        size_t p = pc->param_of[i];
        if (p == CUTUNE__NONE)
            continue;
        if (s->n_values[p] == 0 || s->n_values[p] > MEMO_MAX / combos)
            return 0;
        combos *= s->n_values[p];
        n++;
    }
    if (n == 0)
        return 0; /* checked once anyway */
    pc->memo = calloc(combos, 1);
    pc->memo_index = malloc(2 * n * sizeof *pc->memo_index);
    if (!pc->memo || !pc->memo_index)
        return -1;
    uint32_t mult = 1;
    for (size_t i = 0; i < pc->n_names; i++) {
        size_t p = pc->param_of[i];
        if (p == CUTUNE__NONE)
            continue;
        pc->memo_index[2 * pc->n_memo] = (uint32_t)p;
        pc->memo_index[2 * pc->n_memo + 1] = mult;
        pc->n_memo++;
        mult *= (uint32_t)s->n_values[p];
    }
    return 0;
}

/* Resolves each condition's names and compiles it, in the caller's
 * order. */
int cutune__space_prepare_conditions(builder *b,
                                     const cutune__expr *const *conditions,
                                     size_t n_conditions,
                                     const cutune__constant *constants,
                                     size_t n_constants,
                                     cutune__space_error *err)
{
    const cutune__space *s = b->s;
    b->conds = calloc(n_conditions ? n_conditions : 1, sizeof *b->conds);
    if (!b->conds)
        goto oom;
    for (size_t c = 0; c < n_conditions; c++) {
        const cutune__expr *e = conditions[c];
        prepared_condition *pc = &b->conds[c];
        if (!e) {
            cutune__space_set_error(err, c, NULL, "missing expression");
            return -1;
        }
        b->n_conds = c + 1; /* so that free_conditions sees this one */
        pc->expr = e;
        pc->index = c;
        pc->steps_left = CUTUNE__EXPR_SPACE_STEPS;
        pc->n_names = cutune__expr_name_count(e);
        pc->vars = calloc(pc->n_names ? pc->n_names : 1, sizeof *pc->vars);
        pc->param_of =
            calloc(pc->n_names ? pc->n_names : 1, sizeof *pc->param_of);
        if (!pc->vars || !pc->param_of)
            goto oom;
        for (size_t i = 0; i < pc->n_names; i++) {
            const char *name = cutune__expr_name(e, i);
            size_t p = cutune__space_find_param(s, name);
            pc->param_of[i] = p;
            if (p != CUTUNE__NONE)
                continue;
            size_t k = 0;
            while (k < n_constants && !(constants[k].name &&
                                        strcmp(constants[k].name, name) == 0))
                k++;
            if (k == n_constants || !constants[k].value) {
                cutune__expr_error ee;
                memset(&ee, 0, sizeof ee);
                snprintf(ee.token, sizeof ee.token, "%s", name);
                snprintf(ee.message, sizeof ee.message, "unknown name '%s'",
                         name);
                cutune__space_set_error(
                    err, c, &ee,
                    "'%s' is neither a parameter nor a constant (in %s)", name,
                    cutune__expr_text(e));
                return -1;
            }
            /* A shallow copy is enough: constants are borrowed and only
             * read while create runs. */
            pc->vars[i] = *constants[k].value;
        }
        if (compile_condition(b, pc) || prepare_memo(b, pc))
            goto oom;
    }
    return 0;
oom:
    cutune__space_set_error(err, CUTUNE__NONE, NULL,
                            "out of memory preparing conditions");
    return -1;
}

/* Orders the conditions by the depth at which binding completes them
 * (level 0 holds those naming no parameter, level d+1 those completed at
 * depth d), keeping the caller's order within a level. */
int cutune__space_assign_levels(builder *b)
{
    size_t n_levels = b->s->n_params + 1, nc = b->n_conds;
    size_t *level_of = calloc(nc ? nc : 1, sizeof *level_of);
    size_t *fill = calloc(n_levels, sizeof *fill);
    free(b->level_start);
    free(b->by_level);
    b->level_start = calloc(n_levels + 1, sizeof *b->level_start);
    b->by_level = calloc(nc ? nc : 1, sizeof *b->by_level);
    if (!level_of || !fill || !b->level_start || !b->by_level) {
        free(level_of);
        free(fill);
        return -1;
    }
    for (size_t c = 0; c < nc; c++) {
        const prepared_condition *pc = &b->conds[c];
        size_t level = 0;
        for (size_t i = 0; i < pc->n_names; i++) {
            size_t p = pc->param_of[i];
            if (p != CUTUNE__NONE && b->depth_of[p] + 1 > level)
                level = b->depth_of[p] + 1;
        }
        level_of[c] = level;
        b->level_start[level + 1]++;
    }
    for (size_t l = 0; l < n_levels; l++)
        b->level_start[l + 1] += b->level_start[l];
    for (size_t c = 0; c < nc; c++) {
        size_t l = level_of[c];
        b->by_level[b->level_start[l] + fill[l]++] = &b->conds[c];
    }
    free(level_of);
    free(fill);
    return 0;
}
