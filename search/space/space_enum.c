/* Enumeration of the valid configurations, depth first with each condition
 * checked as soon as it is complete, and their numbering in lexicographic
 * order (recorded as ranks and sorted where the cartesian size allows).
 * Checking a condition lives here, beside the loop that calls it once per
 * partial configuration, so that the compiler can inline it. */
#include "space_internal.h"

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
        if (p != CUTUNE__NONE)
            pc->vars[i] = s->values[p][cfg[p]];
    }
    memset(&ee, 0, sizeof ee);
    if (cutune__expr_eval_steps(pc->expr, pc->vars, &out, &ee,
                                &pc->steps_left)) {
        cutune__space_set_error(err, pc->index, &ee, "%s (in %s)", ee.message,
                                cutune__expr_text(pc->expr));
        return -1;
    }
    int ok = cutune__value_truthy(&out);
    cutune__value_clear(&out);
    return ok;
}

/* evaluate_condition through the memo, where the condition has one. */
int cutune__space_check_condition(const builder *b, prepared_condition *pc,
                                  const uint32_t *cfg,
                                  cutune__space_error *err)
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
        int rc = cutune__space_check_condition(b, b->by_level[c], cfg, err);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

int cutune__space_record(builder *b, const uint32_t *cfg,
                         cutune__space_error *err)
{
    cutune__space *s = b->s;
    size_t np = s->n_params;
    /* np may be 0: the one empty configuration still needs a slot. */
    size_t width =
        b->stride ? sizeof *b->keys : (np ? np : 1) * sizeof *s->configs;
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
    cutune__space_set_error(err, CUTUNE__NONE, NULL,
                            "out of memory: too many valid configurations");
    return -1;
}

/* Ranks are recorded when the cartesian size fits in 64 bits. Returns -1
 * when memory ran out. */
int cutune__space_prepare_keys(builder *b)
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
int cutune__space_enumerate(builder *b, cutune__space_error *err)
{
    cutune__space *s = b->s;
    size_t np = s->n_params;
    int rc = check_level(b, 0, NULL, err);
    if (rc <= 0)
        return rc;
    if (np == 0)
        return cutune__space_record(b, NULL, err);
    uint32_t *cfg = calloc(np, sizeof *cfg);
    if (!cfg) {
        cutune__space_set_error(err, CUTUNE__NONE, NULL, "out of memory");
        return -1;
    }
    size_t d = 0;
    for (;;) {
        size_t p = b->order[d];
        /* A space whose conditions reject nearly all of a huge product
         * would otherwise enumerate for hours without a word. */
        if (b->max_visits && ++b->visits > b->max_visits) {
            b->stopped = 1;
            cutune__space_set_error(
                err, CUTUNE__NONE, NULL,
                "building the space stopped after %llu "
                "partial configurations (%zu valid so far, of a cartesian "
                "product of %.3g): the conditions reject too much too late; "
                "raise the limit (CUTUNE_SPACE_LIMIT) or narrow the Values",
                (unsigned long long)b->max_visits, s->n_valid,
                cutune__space_cartesian_size(s));
            rc = -1;
            break;
        }
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
            if ((rc = cutune__space_record(b, cfg, err)) < 0)
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
int cutune__space_decode_keys(builder *b, int sorted)
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
int cutune__space_sort_configs(cutune__space *s)
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
