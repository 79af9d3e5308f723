/* Builds a search space: copies the parameters, then prepares the
 * conditions, chooses the binding order and enumerates, each step in its
 * own file; also the error record every step fills. */
#include "space_internal.h"

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void cutune__space_set_error(cutune__space_error *err, size_t condition,
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
    if (condition != CUTUNE__NONE) {
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
            cutune__space_set_error(
                err, CUTUNE__NONE, NULL,
                "parameter %zu has no name or no values array", p);
            return -1;
        }
        /* Value indices are stored as uint32_t. */
        if (params[p].n_values > UINT32_MAX) {
            cutune__space_set_error(err, CUTUNE__NONE, NULL,
                                    "parameter %s has too many values",
                                    params[p].name);
            return -1;
        }
        for (size_t q = 0; q < p; q++) {
            /* A repeated name would make conditions ambiguous. */
            if (strcmp(params[q].name, params[p].name) == 0) {
                cutune__space_set_error(err, CUTUNE__NONE, NULL,
                                        "parameter %s is defined twice",
                                        params[p].name);
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
    cutune__space_set_error(err, CUTUNE__NONE, NULL,
                            "out of memory copying parameters");
    return -1;
}

static void free_builder(builder *b)
{
    cutune__space_free_conditions(b->conds, b->n_conds);
    free(b->by_level);
    free(b->level_start);
    free(b->order);
    free(b->depth_of);
    free(b->stride);
    free(b->keys);
    cutune__space_free_params(b);
}

cutune__space *
cutune__space_create(const cutune__param *params, size_t n_params,
                     const cutune__expr *const *conditions,
                     size_t n_conditions, const cutune__constant *constants,
                     size_t n_constants, cutune__space_error *err)
{
    return cutune__space_create_limited(params, n_params, conditions,
                                        n_conditions, constants, n_constants,
                                        CUTUNE__SPACE_VISITS_DEFAULT, err);
}

cutune__space *cutune__space_create_limited(
    const cutune__param *params, size_t n_params,
    const cutune__expr *const *conditions, size_t n_conditions,
    const cutune__constant *constants, size_t n_constants, uint64_t max_visits,
    cutune__space_error *err)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.max_visits = max_visits;
    if (err) {
        memset(err, 0, sizeof *err);
        err->condition = CUTUNE__NONE;
    }
    if ((n_params && !params) || (n_conditions && !conditions)) {
        cutune__space_set_error(err, CUTUNE__NONE, NULL, "invalid arguments");
        return NULL;
    }
    b.s = calloc(1, sizeof *b.s);
    if (!b.s) {
        cutune__space_set_error(err, CUTUNE__NONE, NULL, "out of memory");
        return NULL;
    }
    b.order = calloc(n_params ? n_params : 1, sizeof *b.order);
    b.depth_of = calloc(n_params ? n_params : 1, sizeof *b.depth_of);
    if (!b.order || !b.depth_of) {
        cutune__space_set_error(err, CUTUNE__NONE, NULL, "out of memory");
        goto fail;
    }
    if (copy_params(b.s, params, n_params, err))
        goto fail;
    if (cutune__space_prepare_params(&b) || cutune__space_prepare_keys(&b)) {
        cutune__space_set_error(err, CUTUNE__NONE, NULL, "out of memory");
        goto fail;
    }
    if (cutune__space_prepare_conditions(&b, conditions, n_conditions,
                                         constants, n_constants, err))
        goto fail;
    cutune__space_choose_order(&b);
    int reordered = 0;
    for (size_t p = 0; p < n_params; p++)
        reordered |= b.order[p] != p;
    if (cutune__space_assign_levels(&b))
        goto oom;
    if (reordered) {
        if (cutune__space_enumerate(&b, err) == 0)
            goto built;
        if (b.stopped)
            goto fail;
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
            err->condition = CUTUNE__NONE;
        }
        if (cutune__space_assign_levels(&b))
            goto oom;
    }
    if (cutune__space_enumerate(&b, err))
        goto fail;
built:
    if (b.stride ? cutune__space_decode_keys(&b, !reordered)
                 : reordered && cutune__space_sort_configs(b.s))
        goto oom;
    free_builder(&b);
    if (b.s->n_valid && b.s->n_valid < b.capacity && b.s->n_params) {
        /* Give back the slack of geometric growth; failing to is harmless. */
        uint32_t *fit =
            realloc(b.s->configs, b.s->n_valid * b.s->n_params * sizeof *fit);
        if (fit)
            b.s->configs = fit;
    }
    return b.s;
oom:
    cutune__space_set_error(err, CUTUNE__NONE, NULL, "out of memory");
fail:
    free_builder(&b);
    cutune__space_free(b.s);
    return NULL;
}
