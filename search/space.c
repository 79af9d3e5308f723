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

/* One condition prepared for the enumeration: `vars` is bound once for
 * constants and rebound (shallow copies, nothing owned) from the current
 * configuration for parameters, so checking allocates nothing itself. */
typedef struct prepared_condition {
    const cutune__expr *expr;
    size_t index;            /* position in the caller's array */
    size_t n_names;
    cutune__value *vars;     /* n_names */
    size_t *param_of;        /* n_names; SIZE_MAX for a constant */
} prepared_condition;

typedef struct builder {
    cutune__space *s;
    prepared_condition *conds; /* sorted by the level they are checked at */
    size_t n_conds;
    size_t *level_start;       /* n_params + 2 offsets into conds */
    size_t capacity;           /* configs allocated, in configurations */
    size_t *order;             /* the parameter bound at each depth */
    size_t *depth_of;          /* the depth each parameter is bound at */
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
    }
    free(conds);
}

/* Resolves each condition's names and orders the conditions by the
 * parameter whose binding completes them (level 0 holds those naming no
 * parameter, level p+1 those completed by parameter p). */
static int prepare_conditions(builder *b, const cutune__expr *const *conditions,
                              size_t n_conditions,
                              const cutune__constant *constants,
                              size_t n_constants, cutune__space_error *err)
{
    const cutune__space *s = b->s;
    size_t n_levels = s->n_params + 1;
    size_t *level_of = calloc(n_conditions ? n_conditions : 1,
                              sizeof *level_of);
    prepared_condition *tmp = calloc(n_conditions ? n_conditions : 1,
                                     sizeof *tmp);
    b->level_start = calloc(n_levels + 1, sizeof *b->level_start);
    b->conds = calloc(n_conditions ? n_conditions : 1, sizeof *b->conds);
    if (!level_of || !tmp || !b->level_start || !b->conds)
        goto oom;

    for (size_t c = 0; c < n_conditions; c++) {
        const cutune__expr *e = conditions[c];
        prepared_condition *pc = &tmp[c];
        size_t level = 0;
        if (!e) {
            set_error(err, c, NULL, "missing expression");
            goto fail;
        }
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
            if (p != SIZE_MAX) {
                if (b->depth_of[p] + 1 > level)
                    level = b->depth_of[p] + 1;
                continue;
            }
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
                goto fail;
            }
            /* A shallow copy is enough: constants are borrowed and only
             * read while create runs. */
            pc->vars[i] = *constants[k].value;
        }
        level_of[c] = level;
        b->level_start[level + 1]++;
    }
    for (size_t l = 0; l < n_levels; l++)
        b->level_start[l + 1] += b->level_start[l];
    {
        /* Stable counting sort keeps the caller's order within a level. */
        size_t *fill = calloc(n_levels, sizeof *fill);
        if (!fill)
            goto oom;
        for (size_t c = 0; c < n_conditions; c++) {
            size_t l = level_of[c];
            b->conds[b->level_start[l] + fill[l]++] = tmp[c];
        }
        free(fill);
    }
    b->n_conds = n_conditions;
    free(tmp);
    free(level_of);
    return 0;
oom:
    set_error(err, SIZE_MAX, NULL, "out of memory preparing conditions");
fail:
    free_conditions(tmp, n_conditions);
    free(level_of);
    /* Entries in b->conds alias tmp's storage, now freed. */
    free(b->conds);
    b->conds = NULL;
    return -1;
}

/* 1 when every condition of `level` holds for cfg, 0 when one fails, -1
 * with *err filled when one cannot be evaluated. */
static int check_level(builder *b, size_t level, const uint32_t *cfg,
                       cutune__space_error *err)
{
    const cutune__space *s = b->s;
    for (size_t c = b->level_start[level]; c < b->level_start[level + 1];
         c++) {
        prepared_condition *pc = &b->conds[c];
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
        if (!ok)
            return 0;
    }
    return 1;
}

static int record(builder *b, const uint32_t *cfg, cutune__space_error *err)
{
    cutune__space *s = b->s;
    size_t np = s->n_params;
    if (s->n_valid == b->capacity) {
        size_t cap = b->capacity ? b->capacity * 2 : 1024;
        /* np may be 0: the one empty configuration still needs a slot. */
        size_t width = np ? np : 1;
        if (cap > SIZE_MAX / width / sizeof *s->configs)
            goto oom;
        uint32_t *grown = realloc(s->configs, cap * width * sizeof *grown);
        if (!grown)
            goto oom;
        s->configs = grown;
        b->capacity = cap;
    }
    if (np)
        memcpy(s->configs + s->n_valid * np, cfg, np * sizeof *cfg);
    s->n_valid++;
    return 0;
oom:
    set_error(err, SIZE_MAX, NULL,
              "out of memory: too many valid configurations");
    return -1;
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

/* Puts the valid configurations in lexicographic order of their value
 * indices (parameter 0 most significant), which a binding order other than
 * the parameters' own does not produce: a stable counting sort per
 * parameter, least significant first. */
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
static double pass_rate(builder *b, prepared_condition *pc, size_t seed)
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
            pc->vars[i] = s->values[p][(state >> 33) % s->n_values[p]];
        }
        cutune__value out;
        cutune__expr_error ee;
        if (cutune__expr_eval(pc->expr, pc->vars, &out, &ee) != 0) {
            passed++;
            continue;
        }
        passed += cutune__value_truthy(&out) != 0;
        cutune__value_clear(&out);
    }
    return (passed + 1.0) / (SAMPLES + 2.0);
}

/* Chooses the order in which to bind parameters, so that conditions prune
 * early: by dynamic programming over the sets of bound parameters, it
 * minimises the estimated number of condition evaluations and search
 * nodes, each condition thinning the partial configurations by its
 * sampled pass rate. The order changes only the speed of construction,
 * never the result. Spaces of more than MAX_ORDERED parameters keep their
 * own order. */
#define MAX_ORDERED 18
_Static_assert(MAX_ORDERED <= 32, "parameter masks are 32-bit");

static void choose_order(builder *b)
{
    cutune__space *s = b->s;
    size_t np = s->n_params;
    for (size_t p = 0; p < np; p++)
        b->order[p] = b->depth_of[p] = p;
    if (np < 2 || np > MAX_ORDERED || b->n_conds == 0)
        return;
    size_t nc = b->n_conds;
    uint32_t *mask = calloc(nc, sizeof *mask);
    double *log_rate = calloc(nc, sizeof *log_rate);
    size_t states = (size_t)1 << np;
    double *best = malloc(states * sizeof *best);
    double *count = malloc(states * sizeof *count);
    unsigned char *complete = malloc(states);
    unsigned char *last = malloc(states);
    if (!mask || !log_rate || !best || !count || !complete || !last)
        goto out;
    for (size_t c = 0; c < nc; c++) {
        prepared_condition *pc = &b->conds[c];
        for (size_t i = 0; i < pc->n_names; i++)
            if (pc->param_of[i] != SIZE_MAX)
                mask[c] |= (uint32_t)1 << pc->param_of[i];
        log_rate[c] = mask[c] ? log(pass_rate(b, pc, c)) : 0.0;
    }
    /* count[S]: the expected partial configurations once S is bound and
     * every condition within S applied; complete[S]: how many conditions
     * S completes. Each S extends S less its lowest parameter. */
    double log_size[32];
    for (size_t p = 0; p < np; p++)
        log_size[p] = log((double)s->n_values[p]);
    double *log_bound = malloc(states * sizeof *log_bound);
    if (!log_bound)
        goto out;
    log_bound[0] = 0.0;
    for (size_t S = 0; S < states; S++) {
        if (S) {
            size_t low = 0;
            while (!(S & ((size_t)1 << low)))
                low++;
            log_bound[S] = log_bound[S & (S - 1)] + log_size[low];
        }
        double lc = log_bound[S];
        int k = 0;
        for (size_t c = 0; c < nc; c++)
            if (mask[c] && (mask[c] & S) == mask[c]) {
                lc += log_rate[c];
                k++;
            }
        count[S] = exp(lc);
        complete[S] = (unsigned char)(k > 255 ? 255 : k);
        best[S] = S ? HUGE_VAL : 0.0;
    }
    free(log_bound);
    for (size_t S = 0; S < states; S++) {
        if (best[S] == HUGE_VAL)
            continue;
        for (size_t p = 0; p < np; p++) {
            size_t bit = (size_t)1 << p;
            if (S & bit)
                continue;
            size_t T = S | bit;
            /* The configurations reaching this depth: those of S, each
             * with every value of p. Every condition completed here is
             * evaluated on each, and each is a search node. */
            double reach = count[S] * (double)s->n_values[p];
            double cost = best[S] + reach * (complete[T] - complete[S] + 0.25);
            if (cost < best[T]) {
                best[T] = cost;
                last[T] = (unsigned char)p;
            }
        }
    }
    for (size_t S = states - 1, d = np; d-- > 0;) {
        b->order[d] = last[S];
        S &= ~((size_t)1 << last[S]);
    }
    for (size_t d = 0; d < np; d++)
        b->depth_of[b->order[d]] = d;
out:
    free(mask);
    free(log_rate);
    free(best);
    free(count);
    free(complete);
    free(last);
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
    for (size_t p = 0; p < n_params; p++)
        b.order[p] = b.depth_of[p] = p;
    if (copy_params(b.s, params, n_params, err) ||
        prepare_conditions(&b, conditions, n_conditions, constants,
                           n_constants, err))
        goto fail;
    choose_order(&b);
    int reordered = 0;
    for (size_t p = 0; p < n_params; p++)
        reordered |= b.order[p] != p;
    if (reordered) {
        /* Conditions are checked at the depth their last parameter is
         * bound, which the order just changed. */
        free_conditions(b.conds, b.n_conds);
        free(b.level_start);
        b.conds = NULL;
        b.level_start = NULL;
        if (prepare_conditions(&b, conditions, n_conditions, constants,
                               n_constants, err))
            goto fail;
        if (enumerate(&b, err) == 0 && sort_configs(b.s) == 0)
            goto built;
        /* A condition may fail to evaluate on combinations that, in the
         * parameters' own order, an earlier condition would have excluded
         * (a division guarded by another condition): build again in that
         * order, so errors are exactly those of the file's own order. */
        free_conditions(b.conds, b.n_conds);
        free(b.level_start);
        b.conds = NULL;
        b.level_start = NULL;
        b.s->n_valid = 0;
        for (size_t p = 0; p < n_params; p++)
            b.order[p] = b.depth_of[p] = p;
        if (err) {
            memset(err, 0, sizeof *err);
            err->condition = SIZE_MAX;
        }
        if (prepare_conditions(&b, conditions, n_conditions, constants,
                               n_constants, err))
            goto fail;
    }
    if (enumerate(&b, err))
        goto fail;
built:
    free_conditions(b.conds, b.n_conds);
    free(b.level_start);
    free(b.order);
    free(b.depth_of);
    if (b.s->n_valid && b.s->n_valid < b.capacity && b.s->n_params) {
        /* Give back the slack of geometric growth; failing to is harmless. */
        uint32_t *fit = realloc(b.s->configs, b.s->n_valid * b.s->n_params *
                                                  sizeof *fit);
        if (fit)
            b.s->configs = fit;
    }
    return b.s;
fail:
    free_conditions(b.conds, b.n_conds);
    free(b.level_start);
    free(b.order);
    free(b.depth_of);
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
