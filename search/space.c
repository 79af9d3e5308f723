/* Search space construction and queries; see space.h. */
#include "space.h"

#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cutune__space {
    size_t n_params;
    char **names;             /* n_params, owned */
    cutune__value **values;   /* n_params arrays, owned */
    size_t *n_values;
    double cartesian;
    uint32_t *configs;        /* n_valid * n_params, lexicographic */
    size_t n_valid;
};

/* One condition prepared for the enumeration. Where every name it reads is
 * a numeric parameter or a constant, `prog` is its compiled program, run
 * on `slots` with the parameters' values written in; otherwise, and
 * wherever the program is undecided, the tree evaluator runs on `vars`,
 * bound once for constants and rebound (shallow copies, nothing owned)
 * from the current configuration for parameters. */
typedef struct prepared_condition {
    const cutune__expr *expr;
    size_t index;            /* position in the caller's array */
    size_t n_names;
    cutune__value *vars;     /* n_names */
    size_t *param_of;        /* n_names; SIZE_MAX for a constant */
    cutune__expr_prog *prog; /* NULL: the tree evaluator only */
    cutune__slot *slots;
    uint32_t *bound;         /* n_bound pairs: slot, parameter */
    size_t n_bound;
    /* The truth of the condition per combination of its parameters' value
     * indices, filled the first time enumeration meets the combination
     * (0 not yet, 1 false, 2 true): a condition of a few parameters is met
     * again under every combination of the others. NULL where the
     * combinations exceed MEMO_MAX. */
    unsigned char *memo;
    uint32_t *memo_index;    /* n_memo pairs: parameter, multiplier */
    size_t n_memo;
} prepared_condition;

#define MEMO_MAX ((size_t)1 << 16)

typedef struct builder {
    cutune__space *s;
    prepared_condition *conds;  /* in the caller's order */
    size_t n_conds;
    prepared_condition **by_level; /* by the depth they are checked at */
    size_t *level_start;       /* n_params + 2 offsets into by_level */
    size_t capacity;           /* configs allocated, in configurations */
    size_t *order;             /* the parameter bound at each depth */
    size_t *depth_of;          /* the depth each parameter is bound at */
    cutune__vtype *ptype;      /* per parameter: the type of all its values,
                                  or NONE when they are not numbers of one
                                  type */
    cutune__slot **pslot;      /* per parameter and value, where typed */
    /* Where the cartesian size fits in 64 bits, enumeration records each
     * valid configuration as its rank in the cartesian product (8 bytes,
     * whatever the parameter count); sorting and decoding the ranks gives
     * the configurations in lexicographic order. */
    uint64_t *stride;          /* per parameter; NULL: record rows */
    uint64_t *keys;
} builder;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void set_error(cutune__space_error *err, size_t condition,
                      const cutune__expr_error *expr, const char *fmt, ...)
{
    size_t used = 0;
    va_list ap;
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->condition = condition;
    if (expr)
        err->expr = *expr;
    if (condition != SIZE_MAX) {
        int w = snprintf(err->message, sizeof err->message,
                         "condition %zu: ", condition);
        used = w > 0 ? (size_t)w : 0;
        if (used >= sizeof err->message)
            return;
    }
    va_start(ap, fmt);
    vsnprintf(err->message + used, sizeof err->message - used, fmt, ap);
    va_end(ap);
}

void cutune__space_free(cutune__space *s)
{
    if (!s)
        return;
    if (s->values) {
        for (size_t p = 0; p < s->n_params; p++) {
            if (!s->values[p])
                continue;
            for (size_t v = 0; v < s->n_values[p]; v++)
                cutune__value_clear(&s->values[p][v]);
            free(s->values[p]);
        }
    }
    if (s->names) {
        for (size_t p = 0; p < s->n_params; p++)
            free(s->names[p]);
    }
    free(s->values);
    free(s->names);
    free(s->n_values);
    free(s->configs);
    free(s);
}

static char *dup_string(const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, text, n);
    return copy;
}

static int copy_params(cutune__space *s, const cutune__param *params,
                       size_t n_params, cutune__space_error *err)
{
    s->names = calloc(n_params ? n_params : 1, sizeof *s->names);
    s->values = calloc(n_params ? n_params : 1, sizeof *s->values);
    s->n_values = calloc(n_params ? n_params : 1, sizeof *s->n_values);
    if (!s->names || !s->values || !s->n_values)
        goto oom;
    s->n_params = n_params;
    s->cartesian = 1.0;
    for (size_t p = 0; p < n_params; p++) {
        if (!params[p].name || (params[p].n_values && !params[p].values)) {
            set_error(err, SIZE_MAX, NULL,
                      "parameter %zu has no name or no values array", p);
            return -1;
        }
        /* Value indices are stored as uint32_t. */
        if (params[p].n_values > UINT32_MAX) {
            set_error(err, SIZE_MAX, NULL, "parameter %s has too many values",
                      params[p].name);
            return -1;
        }
        for (size_t q = 0; q < p; q++) {
            /* A repeated name would make conditions ambiguous. */
            if (strcmp(params[q].name, params[p].name) == 0) {
                set_error(err, SIZE_MAX, NULL,
                          "parameter %s is defined twice", params[p].name);
                return -1;
            }
        }
        if (!(s->names[p] = dup_string(params[p].name)))
            goto oom;
        s->values[p] = calloc(params[p].n_values ? params[p].n_values : 1,
                              sizeof **s->values);
        if (!s->values[p])
            goto oom;
        for (size_t v = 0; v < params[p].n_values; v++) {
            if (cutune__value_copy(&s->values[p][v], &params[p].values[v]))
                goto oom;
            /* Counted as we go so that free clears exactly what exists. */
            s->n_values[p] = v + 1;
        }
        s->cartesian *= (double)params[p].n_values;
    }
    return 0;
oom:
    set_error(err, SIZE_MAX, NULL, "out of memory copying parameters");
    return -1;
}

static void free_conditions(prepared_condition *conds, size_t n)
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
static int prepare_params(builder *b)
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

static void free_params(builder *b)
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
        if (p == SIZE_MAX) {
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
    pc->prog = cutune__expr_compile(pc->expr, types, consts,
                                    CUTUNE__PROG_TRUTH);
    if (!pc->prog) {
        pc->n_bound = 0;
        rc = 0;
        goto out;
    }
    pc->slots = calloc(cutune__expr_prog_slot_count(pc->prog),
                       sizeof *pc->slots);
    pc->bound = calloc(pc->n_bound ? 2 * pc->n_bound : 1, sizeof *pc->bound);
    if (!pc->slots || !pc->bound)
        goto out;
    cutune__expr_prog_init_slots(pc->prog, pc->slots);
    for (size_t i = 0, k = 0; i < nn; i++) {
        if (pc->param_of[i] == SIZE_MAX)
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
        if (p == SIZE_MAX)
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
        if (p == SIZE_MAX)
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
static int prepare_conditions(builder *b, const cutune__expr *const *conditions,
                              size_t n_conditions,
                              const cutune__constant *constants,
                              size_t n_constants, cutune__space_error *err)
{
    const cutune__space *s = b->s;
    b->conds = calloc(n_conditions ? n_conditions : 1, sizeof *b->conds);
    if (!b->conds)
        goto oom;
    for (size_t c = 0; c < n_conditions; c++) {
        const cutune__expr *e = conditions[c];
        prepared_condition *pc = &b->conds[c];
        if (!e) {
            set_error(err, c, NULL, "missing expression");
            return -1;
        }
        b->n_conds = c + 1; /* so that free_conditions sees this one */
        pc->expr = e;
        pc->index = c;
        pc->n_names = cutune__expr_name_count(e);
        pc->vars = calloc(pc->n_names ? pc->n_names : 1, sizeof *pc->vars);
        pc->param_of = calloc(pc->n_names ? pc->n_names : 1,
                              sizeof *pc->param_of);
        if (!pc->vars || !pc->param_of)
            goto oom;
        for (size_t i = 0; i < pc->n_names; i++) {
            const char *name = cutune__expr_name(e, i);
            size_t p = cutune__space_find_param(s, name);
            pc->param_of[i] = p;
            if (p != SIZE_MAX)
                continue;
            size_t k = 0;
            while (k < n_constants &&
                   !(constants[k].name && strcmp(constants[k].name, name) == 0))
                k++;
            if (k == n_constants || !constants[k].value) {
                cutune__expr_error ee;
                memset(&ee, 0, sizeof ee);
                snprintf(ee.token, sizeof ee.token, "%s", name);
                snprintf(ee.message, sizeof ee.message,
                         "unknown name '%s'", name);
                set_error(err, c, &ee,
                          "'%s' is neither a parameter nor a constant (in %s)",
                          name, cutune__expr_text(e));
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
    set_error(err, SIZE_MAX, NULL, "out of memory preparing conditions");
    return -1;
}

/* Orders the conditions by the depth at which binding completes them
 * (level 0 holds those naming no parameter, level d+1 those completed at
 * depth d), keeping the caller's order within a level. */
static int assign_levels(builder *b)
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
            if (p != SIZE_MAX && b->depth_of[p] + 1 > level)
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

/* 1 when the condition holds for cfg, 0 when not, -1 with *err filled when
 * it cannot be evaluated (err may be NULL). */
static int evaluate_condition(const builder *b, prepared_condition *pc,
                              const uint32_t *cfg, cutune__space_error *err)
{
    const cutune__space *s = b->s;
    if (pc->prog) {
        const uint32_t *bound = pc->bound;
        for (size_t k = 0; k < pc->n_bound; k++) {
            uint32_t p = bound[2 * k + 1];
            pc->slots[bound[2 * k]] = b->pslot[p][cfg[p]];
        }
        int truth = cutune__expr_prog_truth(pc->prog, pc->slots);
        if (truth >= 0)
            return truth;
        /* Undecided: the tree evaluator gives the answer, or the error. */
    }
    cutune__value out;
    cutune__expr_error ee;
    for (size_t i = 0; i < pc->n_names; i++) {
        size_t p = pc->param_of[i];
        if (p != SIZE_MAX)
            pc->vars[i] = s->values[p][cfg[p]];
    }
    memset(&ee, 0, sizeof ee);
    if (cutune__expr_eval(pc->expr, pc->vars, &out, &ee)) {
        set_error(err, pc->index, &ee, "%s (in %s)", ee.message,
                  cutune__expr_text(pc->expr));
        return -1;
    }
    int ok = cutune__value_truthy(&out);
    cutune__value_clear(&out);
    return ok;
}

/* evaluate_condition through the memo, where the condition has one. */
static int check_condition(const builder *b, prepared_condition *pc,
                           const uint32_t *cfg, cutune__space_error *err)
{
    if (!pc->memo)
        return evaluate_condition(b, pc, cfg, err);
    size_t at = 0;
    for (size_t k = 0; k < pc->n_memo; k++)
        at += (size_t)cfg[pc->memo_index[2 * k]] * pc->memo_index[2 * k + 1];
    if (pc->memo[at])
        return pc->memo[at] - 1;
    int truth = evaluate_condition(b, pc, cfg, err);
    if (truth >= 0)
        pc->memo[at] = (unsigned char)(truth + 1);
    return truth;
}

/* 1 when every condition of `level` holds for cfg, 0 when one fails, -1
 * with *err filled when one cannot be evaluated. */
static int check_level(const builder *b, size_t level, const uint32_t *cfg,
                       cutune__space_error *err)
{
    for (size_t c = b->level_start[level]; c < b->level_start[level + 1];
         c++) {
        int rc = check_condition(b, b->by_level[c], cfg, err);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

static int record(builder *b, const uint32_t *cfg, cutune__space_error *err)
{
    cutune__space *s = b->s;
    size_t np = s->n_params;
    /* np may be 0: the one empty configuration still needs a slot. */
    size_t width = b->stride ? sizeof *b->keys
                             : (np ? np : 1) * sizeof *s->configs;
    if (s->n_valid == b->capacity) {
        size_t cap = b->capacity ? b->capacity * 2 : 1024;
        if (cap > SIZE_MAX / width)
            goto oom;
        if (b->stride) {
            uint64_t *grown = realloc(b->keys, cap * width);
            if (!grown)
                goto oom;
            b->keys = grown;
        } else {
            uint32_t *grown = realloc(s->configs, cap * width);
            if (!grown)
                goto oom;
            s->configs = grown;
        }
        b->capacity = cap;
    }
    if (b->stride) {
        uint64_t key = 0;
        for (size_t p = 0; p < np; p++)
            key += cfg[p] * b->stride[p];
        b->keys[s->n_valid] = key;
    } else if (np) {
        memcpy(s->configs + s->n_valid * np, cfg, np * sizeof *cfg);
    }
    s->n_valid++;
    return 0;
oom:
    set_error(err, SIZE_MAX, NULL,
              "out of memory: too many valid configurations");
    return -1;
}

/* Ranks are recorded when the cartesian size fits in 64 bits. Returns -1
 * when memory ran out. */
static int prepare_keys(builder *b)
{
    const cutune__space *s = b->s;
    size_t np = s->n_params;
    uint64_t span = 1;
    if (np == 0)
        return 0;
    for (size_t p = 0; p < np; p++) {
        if (s->n_values[p] == 0)
            return 0; /* nothing to record */
        if (span > UINT64_MAX / s->n_values[p])
            return 0;
        span *= s->n_values[p];
    }
    if (!(b->stride = malloc(np * sizeof *b->stride)))
        return -1;
    for (size_t p = np, st = 1; p-- > 0;) {
        b->stride[p] = st;
        st *= s->n_values[p];
    }
    return 0;
}

/* Depth first over value indices, binding parameters in b->order; each
 * condition is checked at the depth its last parameter is bound. */
static int enumerate(builder *b, cutune__space_error *err)
{
    cutune__space *s = b->s;
    size_t np = s->n_params;
    int rc = check_level(b, 0, NULL, err);
    if (rc <= 0)
        return rc;
    if (np == 0)
        return record(b, NULL, err);
    uint32_t *cfg = calloc(np, sizeof *cfg);
    if (!cfg) {
        set_error(err, SIZE_MAX, NULL, "out of memory");
        return -1;
    }
    size_t d = 0;
    for (;;) {
        size_t p = b->order[d];
        if (cfg[p] >= s->n_values[p]) {
            cfg[p] = 0;
            if (d == 0)
                break;
            d--;
            cfg[b->order[d]]++;
            continue;
        }
        rc = check_level(b, d + 1, cfg, err);
        if (rc < 0)
            break;
        if (rc == 0) {
            cfg[p]++;
            continue;
        }
        if (d + 1 == np) {
            if ((rc = record(b, cfg, err)) < 0)
                break;
            cfg[p]++;
            continue;
        }
        d++;
        cfg[b->order[d]] = 0;
    }
    free(cfg);
    return rc < 0 ? -1 : 0;
}

/* Sorts the recorded ranks (least significant digit first, over the bits
 * the cartesian size needs) and decodes them into the configurations, now
 * in lexicographic order. Ranks come sorted from the parameters' own
 * order, which skips the sort. */
static int decode_keys(builder *b, int sorted)
{
    enum { DIGIT = 11 };
    cutune__space *s = b->s;
    size_t np = s->n_params, n = s->n_valid;
    uint64_t *keys = b->keys;
    uint32_t *rows = malloc((n ? n : 1) * np * sizeof *rows);
    if (!rows)
        return -1;
    if (!sorted && n > 1) {
        uint64_t span = b->stride[0] * s->n_values[0];
        int bits = 0;
        while (bits < 64 && (span - 1) >> bits)
            bits++;
        uint64_t *other = malloc(n * sizeof *other);
        size_t *count = malloc(((size_t)1 << DIGIT) * sizeof *count);
        if (!other || !count) {
            free(other);
            free(count);
            free(rows);
            return -1;
        }
        const uint64_t mask = ((uint64_t)1 << DIGIT) - 1;
        for (int shift = 0; shift < bits; shift += DIGIT) {
            memset(count, 0, ((size_t)1 << DIGIT) * sizeof *count);
            for (size_t i = 0; i < n; i++)
                count[(keys[i] >> shift) & mask]++;
            size_t sum = 0;
            for (size_t d = 0; d < ((size_t)1 << DIGIT); d++) {
                size_t c = count[d];
                count[d] = sum;
                sum += c;
            }
            for (size_t i = 0; i < n; i++)
                other[count[(keys[i] >> shift) & mask]++] = keys[i];
            uint64_t *swap = keys;
            keys = other;
            other = swap;
        }
        free(count);
        /* Whichever buffer is not the result goes. */
        free(other);
        b->keys = keys;
    }
    /* Each rank is the previous plus a small step: adding it to the digits,
     * least significant first, divides only when a step spans a digit. */
    uint32_t *cur = rows;
    if (n) {
        uint64_t k = keys[0];
        for (size_t p = 0; p < np; p++) {
            cur[p] = (uint32_t)(k / b->stride[p]);
            k %= b->stride[p];
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint32_t *next = cur + np;
        memcpy(next, cur, np * sizeof *next);
        uint64_t carry = keys[i] - keys[i - 1];
        for (size_t p = np; carry && p-- > 0;) {
            uint64_t nv = s->n_values[p];
            if (nv == 1)
                continue;
            uint64_t add = carry;
            carry = 0;
            if (add >= nv) {
                carry = add / nv;
                add %= nv;
            }
            add += next[p];
            if (add >= nv) {
                add -= nv;
                carry++;
            }
            next[p] = (uint32_t)add;
        }
        cur = next;
    }
    free(s->configs);
    s->configs = rows;
    b->capacity = n;
    return 0;
}

/* Puts configurations recorded as rows in lexicographic order of their
 * value indices (parameter 0 most significant), for spaces whose cartesian
 * size does not fit in 64 bits: a stable counting sort per parameter,
 * least significant first. */
static int sort_configs(cutune__space *s)
{
    size_t np = s->n_params, n = s->n_valid;
    if (np == 0 || n < 2)
        return 0;
    uint32_t *tmp = malloc(n * np * sizeof *tmp);
    size_t max_values = 1;
    for (size_t p = 0; p < np; p++)
        if (s->n_values[p] > max_values)
            max_values = s->n_values[p];
    size_t *count = malloc((max_values + 1) * sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return -1;
    }
    for (size_t p = np; p-- > 0;) {
        if (s->n_values[p] < 2)
            continue;
        memset(count, 0, (s->n_values[p] + 1) * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[s->configs[i * np + p] + 1]++;
        for (size_t v = 0; v < s->n_values[p]; v++)
            count[v + 1] += count[v];
        for (size_t i = 0; i < n; i++) {
            size_t at = count[s->configs[i * np + p]]++;
            memcpy(tmp + at * np, s->configs + i * np, np * sizeof *tmp);
        }
        uint32_t *swap = s->configs;
        s->configs = tmp;
        tmp = swap;
    }
    free(tmp);
    free(count);
    return 0;
}

/* Estimates how often a condition holds, from a fixed sample of its
 * parameters' values; an evaluation error counts as holding. */
static double pass_rate(const builder *b, prepared_condition *pc, size_t seed,
                        uint32_t *cfg)
{
    enum { SAMPLES = 64 };
    const cutune__space *s = b->s;
    uint64_t state = 0x9e3779b97f4a7c15ULL * (seed + 1);
    int passed = 0;
    for (int k = 0; k < SAMPLES; k++) {
        for (size_t i = 0; i < pc->n_names; i++) {
            size_t p = pc->param_of[i];
            if (p == SIZE_MAX)
                continue;
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            cfg[p] = (uint32_t)((state >> 33) % s->n_values[p]);
        }
        passed += check_condition(b, pc, cfg, NULL) != 0;
    }
    return (passed + 1.0) / (SAMPLES + 2.0);
}

/* Chooses the order in which to bind parameters, so that conditions prune
 * early. The order changes only the speed of construction, never the
 * result.
 *
 * Parameters of one value are bound first (they multiply nothing), those
 * no condition names last (wherever else they went they would multiply
 * the work below them). The rest are ordered by dynamic programming over
 * the sets of them bound, minimising the estimated number of condition
 * evaluations and search nodes, each condition thinning the partial
 * configurations by its sampled pass rate. The program's 2^n states are
 * only worth visiting when the enumeration is expected to cost more than
 * that, and never beyond MAX_EXACT parameters; otherwise the order is
 * greedy: each step binds the parameter that leaves the fewest expected
 * partial configurations. */
#define MAX_EXACT 16

typedef struct order_model {
    size_t k;          /* parameters ordered */
    size_t *param;     /* k: the parameter of each position */
    double *log_size;  /* k: log of its value count */
    size_t nc;         /* conditions naming any of them */
    double *log_rate;  /* nc */
    size_t **members;  /* nc lists of positions, each ended by SIZE_MAX */
} order_model;

/* Exact: writes the best permutation of positions to `out`. */
static int order_exact(const order_model *m, size_t *out)
{
    size_t k = m->k, nc = m->nc, states = (size_t)1 << k;
    uint32_t *mask = calloc(nc ? nc : 1, sizeof *mask);
    size_t *by_pos_start = calloc(k + 1, sizeof *by_pos_start);
    size_t *by_pos = NULL; /* conditions naming each position */
    double *best = malloc(states * sizeof *best);
    double *count = malloc(states * sizeof *count);
    double *log_count = malloc(states * sizeof *log_count);
    unsigned char *complete = malloc(states);
    unsigned char *last = malloc(states);
    int rc = -1;
    if (!mask || !by_pos_start || !best || !count || !log_count ||
        !complete || !last)
        goto out;
    size_t members = 0;
    for (size_t c = 0; c < nc; c++)
        for (const size_t *q = m->members[c]; *q != SIZE_MAX; q++) {
            mask[c] |= (uint32_t)1 << *q;
            by_pos_start[*q + 1]++;
            members++;
        }
    for (size_t q = 0; q < k; q++)
        by_pos_start[q + 1] += by_pos_start[q];
    if (!(by_pos = malloc((members ? members : 1) * sizeof *by_pos)))
        goto out;
    {
        size_t fill[MAX_EXACT] = {0};
        for (size_t c = 0; c < nc; c++)
            for (const size_t *q = m->members[c]; *q != SIZE_MAX; q++)
                by_pos[by_pos_start[*q] + fill[*q]++] = c;
    }
    double size[MAX_EXACT];
    for (size_t q = 0; q < k; q++)
        size[q] = exp(m->log_size[q]);
    /* count[S]: the expected partial configurations once S is bound and
     * every condition within S applied; complete[S]: how many conditions
     * S completes. S extends S less its lowest parameter, and completes
     * the conditions naming that parameter whose others are in S. */
    log_count[0] = 0.0;
    count[0] = 1.0;
    complete[0] = 0;
    best[0] = 0.0;
    for (size_t S = 1; S < states; S++) {
        size_t low = 0;
        while (!(S & ((size_t)1 << low)))
            low++;
        size_t prev = S & (S - 1);
        double lc = log_count[prev] + m->log_size[low];
        unsigned n_complete = complete[prev];
        for (size_t i = by_pos_start[low]; i < by_pos_start[low + 1]; i++) {
            size_t c = by_pos[i];
            if ((mask[c] & S) == mask[c]) {
                lc += m->log_rate[c];
                n_complete++;
            }
        }
        log_count[S] = lc;
        count[S] = exp(lc);
        complete[S] = (unsigned char)(n_complete > 255 ? 255 : n_complete);
        best[S] = HUGE_VAL;
    }
    for (size_t S = 0; S < states; S++) {
        for (size_t q = 0; q < k; q++) {
            size_t bit = (size_t)1 << q;
            if (S & bit)
                continue;
            size_t T = S | bit;
            /* The configurations reaching this depth: those of S, each
             * with every value of q. Every condition completed here is
             * evaluated on each, and each is a search node. */
            double reach = count[S] * size[q];
            double cost = best[S] + reach * (complete[T] - complete[S] + 0.25);
            if (cost < best[T]) {
                best[T] = cost;
                last[T] = (unsigned char)q;
            }
        }
    }
    for (size_t S = states - 1, d = k; d-- > 0;) {
        out[d] = last[S];
        S &= ~((size_t)1 << last[S]);
    }
    rc = 0;
out:
    free(mask);
    free(by_pos_start);
    free(by_pos);
    free(best);
    free(count);
    free(log_count);
    free(complete);
    free(last);
    return rc;
}

/* Greedy: at each depth the position leaving the fewest expected partial
 * configurations, the lowest on ties. */
static int order_greedy(const order_model *m, size_t *out)
{
    size_t k = m->k, nc = m->nc;
    size_t *left = calloc(nc ? nc : 1, sizeof *left); /* unbound members */
    unsigned char *bound = calloc(k, 1);
    double *gain = malloc(k * sizeof *gain);
    if (!left || !bound || !gain) {
        free(left);
        free(bound);
        free(gain);
        return -1;
    }
    for (size_t c = 0; c < nc; c++)
        for (const size_t *q = m->members[c]; *q != SIZE_MAX; q++)
            left[c]++;
    for (size_t d = 0; d < k; d++) {
        for (size_t q = 0; q < k; q++)
            gain[q] = m->log_size[q];
        for (size_t c = 0; c < nc; c++) {
            if (left[c] != 1)
                continue;
            for (const size_t *q = m->members[c]; *q != SIZE_MAX; q++)
                if (!bound[*q])
                    gain[*q] += m->log_rate[c];
        }
        size_t pick = SIZE_MAX;
        for (size_t q = 0; q < k; q++)
            if (!bound[q] && (pick == SIZE_MAX || gain[q] < gain[pick]))
                pick = q;
        out[d] = pick;
        bound[pick] = 1;
        for (size_t c = 0; c < nc; c++)
            for (const size_t *q = m->members[c]; *q != SIZE_MAX; q++)
                if (*q == pick)
                    left[c]--;
    }
    free(left);
    free(bound);
    free(gain);
    return 0;
}

/* The model's cost of binding in the order `perm`: what order_exact
 * minimises. */
static double order_cost(const order_model *m, const size_t *perm)
{
    size_t k = m->k, nc = m->nc;
    unsigned char *bound = calloc(k ? k : 1, 1);
    if (!bound)
        return HUGE_VAL;
    double log_count = 0.0, cost = 0.0;
    for (size_t d = 0; d < k; d++) {
        size_t q = perm[d];
        bound[q] = 1;
        double reach = exp(log_count + m->log_size[q]);
        size_t completed = 0;
        log_count += m->log_size[q];
        for (size_t c = 0; c < nc; c++) {
            int names_q = 0, all = 1;
            for (const size_t *r = m->members[c]; *r != SIZE_MAX; r++) {
                names_q |= *r == q;
                all &= bound[*r];
            }
            if (names_q && all) {
                completed++;
                log_count += m->log_rate[c];
            }
        }
        cost += reach * ((double)completed + 0.25);
    }
    free(bound);
    return cost;
}

static void choose_order(builder *b)
{
    cutune__space *s = b->s;
    size_t np = s->n_params, nc = b->n_conds;
    for (size_t p = 0; p < np; p++)
        b->order[p] = b->depth_of[p] = p;
    if (np < 2 || nc == 0)
        return;
    for (size_t p = 0; p < np; p++)
        if (s->n_values[p] == 0)
            return; /* the space is empty; keep the file's order */
    order_model m;
    memset(&m, 0, sizeof m);
    size_t *pos = malloc(np * sizeof *pos); /* parameter -> position */
    unsigned char *named = calloc(np, 1);
    size_t *perm = malloc(np * sizeof *perm);
    uint32_t *cfg = calloc(np, sizeof *cfg);
    m.param = malloc(np * sizeof *m.param);
    m.log_size = malloc(np * sizeof *m.log_size);
    m.log_rate = malloc(nc * sizeof *m.log_rate);
    m.members = calloc(nc, sizeof *m.members);
    if (!pos || !named || !perm || !cfg || !m.param || !m.log_size ||
        !m.log_rate || !m.members)
        goto out;
    for (size_t c = 0; c < nc; c++)
        for (size_t i = 0; i < b->conds[c].n_names; i++)
            if (b->conds[c].param_of[i] != SIZE_MAX)
                named[b->conds[c].param_of[i]] = 1;
    for (size_t p = 0; p < np; p++) {
        pos[p] = SIZE_MAX;
        if (s->n_values[p] > 1 && named[p]) {
            pos[p] = m.k;
            m.param[m.k] = p;
            m.log_size[m.k++] = log((double)s->n_values[p]);
        }
    }
    for (size_t c = 0; c < nc; c++) {
        prepared_condition *pc = &b->conds[c];
        size_t *list = malloc((pc->n_names + 1) * sizeof *list), n = 0;
        if (!list)
            goto out;
        for (size_t i = 0; i < pc->n_names; i++)
            if (pc->param_of[i] != SIZE_MAX && pos[pc->param_of[i]] != SIZE_MAX)
                list[n++] = pos[pc->param_of[i]];
        list[n] = SIZE_MAX;
        if (n == 0) {
            free(list); /* decided by one-value parameters alone */
            continue;
        }
        m.members[m.nc] = list;
        m.log_rate[m.nc++] = log(pass_rate(b, pc, c, cfg));
    }
    if (m.k == 1)
        perm[0] = 0;
    if (m.k > 1 && order_greedy(&m, perm))
        goto out;
    /* The exact order, where the work it may save exceeds its own: each
     * state of the program costs about what a search node does. */
    if (m.k > 1 && m.k <= MAX_EXACT &&
        order_cost(&m, perm) > (double)((size_t)1 << m.k) * (double)m.k &&
        order_exact(&m, perm))
        goto out;
    size_t d = 0;
    for (size_t p = 0; p < np; p++)
        if (s->n_values[p] <= 1)
            b->order[d++] = p;
    for (size_t q = 0; q < m.k; q++)
        b->order[d++] = m.param[perm[q]];
    for (size_t p = 0; p < np; p++)
        if (s->n_values[p] > 1 && !named[p])
            b->order[d++] = p;
    for (d = 0; d < np; d++)
        b->depth_of[b->order[d]] = d;
out:
    if (m.members)
        for (size_t c = 0; c < m.nc; c++)
            free(m.members[c]);
    free(m.members);
    free(m.log_rate);
    free(m.log_size);
    free(m.param);
    free(cfg);
    free(perm);
    free(named);
    free(pos);
}

static void free_builder(builder *b)
{
    free_conditions(b->conds, b->n_conds);
    free(b->by_level);
    free(b->level_start);
    free(b->order);
    free(b->depth_of);
    free(b->stride);
    free(b->keys);
    free_params(b);
}

cutune__space *cutune__space_create(const cutune__param *params,
                                    size_t n_params,
                                    const cutune__expr *const *conditions,
                                    size_t n_conditions,
                                    const cutune__constant *constants,
                                    size_t n_constants,
                                    cutune__space_error *err)
{
    builder b;
    memset(&b, 0, sizeof b);
    if (err) {
        memset(err, 0, sizeof *err);
        err->condition = SIZE_MAX;
    }
    if ((n_params && !params) || (n_conditions && !conditions)) {
        set_error(err, SIZE_MAX, NULL, "invalid arguments");
        return NULL;
    }
    b.s = calloc(1, sizeof *b.s);
    if (!b.s) {
        set_error(err, SIZE_MAX, NULL, "out of memory");
        return NULL;
    }
    b.order = calloc(n_params ? n_params : 1, sizeof *b.order);
    b.depth_of = calloc(n_params ? n_params : 1, sizeof *b.depth_of);
    if (!b.order || !b.depth_of) {
        set_error(err, SIZE_MAX, NULL, "out of memory");
        goto fail;
    }
    if (copy_params(b.s, params, n_params, err))
        goto fail;
    if (prepare_params(&b) || prepare_keys(&b)) {
        set_error(err, SIZE_MAX, NULL, "out of memory");
        goto fail;
    }
    if (prepare_conditions(&b, conditions, n_conditions, constants,
                           n_constants, err))
        goto fail;
    choose_order(&b);
    int reordered = 0;
    for (size_t p = 0; p < n_params; p++)
        reordered |= b.order[p] != p;
    if (assign_levels(&b))
        goto oom;
    if (reordered) {
        if (enumerate(&b, err) == 0)
            goto built;
        /* A condition may fail to evaluate on combinations that, in the
         * parameters' own order, an earlier condition would have excluded
         * (a division guarded by another condition): build again in that
         * order, so errors are exactly those of the file's own order. */
        b.s->n_valid = 0;
        reordered = 0;
        for (size_t p = 0; p < n_params; p++)
            b.order[p] = b.depth_of[p] = p;
        if (err) {
            memset(err, 0, sizeof *err);
            err->condition = SIZE_MAX;
        }
        if (assign_levels(&b))
            goto oom;
    }
    if (enumerate(&b, err))
        goto fail;
built:
    if (b.stride ? decode_keys(&b, !reordered)
                 : reordered && sort_configs(b.s))
        goto oom;
    free_builder(&b);
    if (b.s->n_valid && b.s->n_valid < b.capacity && b.s->n_params) {
        /* Give back the slack of geometric growth; failing to is harmless. */
        uint32_t *fit = realloc(b.s->configs, b.s->n_valid * b.s->n_params *
                                                  sizeof *fit);
        if (fit)
            b.s->configs = fit;
    }
    return b.s;
oom:
    set_error(err, SIZE_MAX, NULL, "out of memory");
fail:
    free_builder(&b);
    cutune__space_free(b.s);
    return NULL;
}

size_t cutune__space_param_count(const cutune__space *s)
{
    return s->n_params;
}

const char *cutune__space_param_name(const cutune__space *s, size_t p)
{
    return p < s->n_params ? s->names[p] : NULL;
}

size_t cutune__space_value_count(const cutune__space *s, size_t p)
{
    return p < s->n_params ? s->n_values[p] : 0;
}

const cutune__value *cutune__space_value(const cutune__space *s, size_t p,
                                         size_t v)
{
    if (p >= s->n_params || v >= s->n_values[p])
        return NULL;
    return &s->values[p][v];
}

size_t cutune__space_find_param(const cutune__space *s, const char *name)
{
    if (!name)
        return SIZE_MAX;
    for (size_t p = 0; p < s->n_params; p++) {
        if (strcmp(s->names[p], name) == 0)
            return p;
    }
    return SIZE_MAX;
}

double cutune__space_cartesian_size(const cutune__space *s)
{
    return s->cartesian;
}

size_t cutune__space_size(const cutune__space *s)
{
    return s->n_valid;
}

const uint32_t *cutune__space_config(const cutune__space *s, size_t index)
{
    if (index >= s->n_valid)
        return NULL;
    return s->configs + index * s->n_params;
}

/* Lexicographic comparison of stored configuration k with `base` in which
 * parameter `p` is replaced by `v` (p == SIZE_MAX: no replacement), so that
 * neighbours are looked up without building them in a buffer. */
static int compare_with(const cutune__space *s, size_t k,
                        const uint32_t *base, size_t p, uint32_t v)
{
    const uint32_t *c = s->configs + k * s->n_params;
    for (size_t q = 0; q < s->n_params; q++) {
        uint32_t want = q == p ? v : base[q];
        if (c[q] != want)
            return c[q] < want ? -1 : 1;
    }
    return 0;
}

static int find_with(const cutune__space *s, const uint32_t *base, size_t p,
                     uint32_t v, size_t *index)
{
    size_t lo = 0, hi = s->n_valid;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_with(s, mid, base, p, v);
        if (c == 0) {
            *index = mid;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int cutune__space_index_of(const cutune__space *s, const uint32_t *config,
                           size_t *index)
{
    size_t found;
    if (!config && s->n_params)
        return 0;
    if (!find_with(s, config, SIZE_MAX, 0, &found))
        return 0;
    if (index)
        *index = found;
    return 1;
}

size_t cutune__space_neighbours(const cutune__space *s, size_t index,
                                cutune__neighbour_kind kind, size_t *out,
                                size_t cap)
{
    size_t count = 0;
    if (index >= s->n_valid)
        return 0;
    const uint32_t *base = s->configs + index * s->n_params;
    for (size_t p = 0; p < s->n_params; p++) {
        size_t nv = s->n_values[p];
        uint32_t cur = base[p];
        for (size_t v = 0; v < nv; v++) {
            if (v == cur)
                continue;
            if (kind == CUTUNE__NEIGHBOUR_ADJACENT && v + 1 != cur &&
                v != (size_t)cur + 1)
                continue;
            size_t found;
            if (!find_with(s, base, p, (uint32_t)v, &found))
                continue;
            if (count < cap && out)
                out[count] = found;
            count++;
        }
    }
    return count;
}

size_t cutune__space_random(const cutune__space *s, gsl_rng *rng)
{
    size_t n = s->n_valid;
    if (n == 0)
        return SIZE_MAX;
    unsigned long range = gsl_rng_max(rng) - gsl_rng_min(rng);
    if ((unsigned long)(n - 1) <= range)
        return (size_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    /* Beyond the generator's range uniform_int would fail; the rounding
     * bias of a scaled double is negligible at such sizes. */
    size_t r = (size_t)(gsl_rng_uniform(rng) * (double)n);
    return r < n ? r : n - 1;
}

/* Cost of a configuration relative to the target: differing parameters
 * first, then total index distance. */
typedef struct nearest_cost {
    size_t mismatches;
    uint64_t distance;
} nearest_cost;

static int cost_cmp(nearest_cost a, nearest_cost b)
{
    if (a.mismatches != b.mismatches)
        return a.mismatches < b.mismatches ? -1 : 1;
    if (a.distance != b.distance)
        return a.distance < b.distance ? -1 : 1;
    return 0;
}

typedef struct nearest_search {
    const cutune__space *s;
    const uint32_t *target;
    size_t best;
    nearest_cost best_cost;
} nearest_search;

/* First index in [lo, hi) whose value of parameter p exceeds v; the range
 * shares a prefix, so it is sorted on p. */
static size_t upper_bound(const cutune__space *s, size_t lo, size_t hi,
                          size_t p, uint32_t v)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->configs[mid * s->n_params + p] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t lower_bound(const cutune__space *s, size_t lo, size_t hi,
                          size_t p, uint32_t v)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->configs[mid * s->n_params + p] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Branch and bound over the sorted configurations viewed as a trie: the
 * range [lo, hi) shares the values of parameters before p. Costs only grow
 * with depth, so a subtree is cut when it cannot beat the best found, or
 * can at most tie it at higher indices. The target's own value is tried
 * first, which finds a tight bound early. */
static void nearest_visit(nearest_search *ns, size_t lo, size_t hi, size_t p,
                          nearest_cost cost)
{
    const cutune__space *s = ns->s;
    if (ns->best != SIZE_MAX) {
        int c = cost_cmp(cost, ns->best_cost);
        if (c > 0 || (c == 0 && lo > ns->best))
            return;
    }
    if (p == s->n_params) {
        /* Equal cost here means lo < best, by the cut above. */
        ns->best = lo;
        ns->best_cost = cost;
        return;
    }
    uint32_t t = ns->target[p];
    size_t t_lo = lower_bound(s, lo, hi, p, t);
    size_t t_hi = upper_bound(s, t_lo, hi, p, t);
    if (t_lo < t_hi)
        nearest_visit(ns, t_lo, t_hi, p + 1, cost);
    for (size_t g = lo; g < hi;) {
        if (g == t_lo && t_lo < t_hi) {
            g = t_hi;
            continue;
        }
        uint32_t v = s->configs[g * s->n_params + p];
        size_t end = upper_bound(s, g, hi, p, v);
        nearest_cost child = cost;
        child.mismatches++;
        child.distance += v > t ? (uint64_t)(v - t) : (uint64_t)(t - v);
        nearest_visit(ns, g, end, p + 1, child);
        g = end;
    }
}

size_t cutune__space_nearest(const cutune__space *s, const uint32_t *config)
{
    nearest_search ns;
    nearest_cost zero = {0, 0};
    if (s->n_valid == 0 || (!config && s->n_params))
        return SIZE_MAX;
    ns.s = s;
    ns.target = config;
    ns.best = SIZE_MAX;
    ns.best_cost = zero;
    nearest_visit(&ns, 0, s->n_valid, 0, zero);
    return ns.best;
}
