/* What builds lists in the T1 expression language: + and * on lists and
 * strings, the builtin calls (range, list, len, max, min), list displays and
 * comprehensions. Each charges the evaluation's budget of list elements
 * (WORK_FACTOR), which is how hostile input is kept from running away. */
#include "expr_internal.h"

/* Appends src's items to dst (which has room), moving them when src is
 * owned. */
static int append_items(ev_ctx *c, const operand *o, cutune__value *dst,
                        size_t *k, const cutune__value *src,
                        cutune__value *src_own)
{
    size_t n = src->u.list.n;
    if (src_own) {
        if (n)
            memcpy(dst + *k, src->u.list.items, n * sizeof *dst);
        *k += n;
        src_own->u.list.n = 0; /* moved; clearing frees only the array */
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (cutune__expr_ev_copy(c, o->pos, o->len, &dst[*k],
                                 &src->u.list.items[i]))
            return -1;
        ++*k;
    }
    return 0;
}

int cutune__expr_list_concat(ev_ctx *c, const operand *o,
                             const cutune__value *a, cutune__value *a_own,
                             const cutune__value *b, cutune__value *b_own,
                             cutune__value *out)
{
    size_t na = a->u.list.n, nb = b->u.list.n, max = c->e->max_list;
    if (nb > max || na > max - nb)
        return cutune__expr_ev_fail(
            c, o->pos, o->len,
            "list concatenation produces more than %zu values", max);
    if (cutune__expr_charge(c, o->pos, o->len, na + nb))
        return -1;
    cutune__expr_set_empty_list(out);
    if (na + nb == 0)
        return 0;
    cutune__value *items;
    size_t k = 0;
    if (a_own) {
        /* Grow the left list in place: `[1] + [2] + [3] + ...` stays
         * linear. */
        items = realloc(a_own->u.list.items, (na + nb) * sizeof *items);
        if (!items)
            return cutune__expr_ev_oom(c);
        a_own->u.list.items = items;
        a_own->u.list.n = 0;
        a_own->type = CUTUNE__V_NONE;
        k = na;
    } else {
        items = malloc((na + nb) * sizeof *items);
        if (!items)
            return cutune__expr_ev_oom(c);
        if (append_items(c, o, items, &k, a, NULL))
            goto fail;
    }
    if (append_items(c, o, items, &k, b, b_own))
        goto fail;
    out->u.list.items = items;
    out->u.list.n = k;
    return 0;
fail:
    while (k--)
        cutune__value_clear(&items[k]);
    free(items);
    return -1;
}

/* list * int and str * int; strings are held to max_list bytes. */
int cutune__expr_repeat(ev_ctx *c, const operand *o, const cutune__value *a,
                        int64_t times, cutune__value *out)
{
    size_t unit = a->type == CUTUNE__V_LIST ? a->u.list.n : strlen(a->u.s);
    /* An empty operand repeats to nothing, however many times. */
    size_t k = times > 0 && unit ? (size_t)(uint64_t)times : 0;
    if (unit && k > c->e->max_list / unit)
        return cutune__expr_ev_fail(c, o->pos, o->len,
                                    "repetition produces more than %zu values",
                                    c->e->max_list);
    if (a->type == CUTUNE__V_STR) {
        if (cutune__expr_charge(c, o->pos, o->len, unit * k / sizeof *a))
            return -1;
        char *s = malloc(unit * k + 1);
        if (!s)
            return cutune__expr_ev_oom(c);
        for (size_t i = 0; i < k; i++)
            memcpy(s + i * unit, a->u.s, unit);
        s[unit * k] = '\0';
        out->type = CUTUNE__V_STR;
        out->u.s = s;
        return 0;
    }
    if (cutune__expr_charge(c, o->pos, o->len, unit * k))
        return -1;
    cutune__expr_set_empty_list(out);
    if (unit * k == 0)
        return 0;
    cutune__value *items = malloc(unit * k * sizeof *items);
    if (!items)
        return cutune__expr_ev_oom(c);
    for (size_t i = 0; i < unit * k; i++) {
        if (cutune__expr_ev_copy(c, o->pos, o->len, &items[i],
                                 &a->u.list.items[i % unit])) {
            while (i--)
                cutune__value_clear(&items[i]);
            free(items);
            return -1;
        }
    }
    out->u.list.items = items;
    out->u.list.n = unit * k;
    return 0;
}

/* A string iterates as its one-byte strings. */
static int str_to_list(ev_ctx *c, const node *at, const char *s,
                       cutune__value *out)
{
    size_t n = strlen(s);
    cutune__expr_set_empty_list(out);
    if (n > c->e->max_list)
        return cutune__expr_ev_fail(c, at->pos, at->len,
                                    "list would have more than %zu "
                                    "values",
                                    c->e->max_list);
    if (cutune__expr_charge(c, at->pos, at->len, n))
        return -1;
    if (!n)
        return 0;
    cutune__value *items = calloc(n, sizeof *items);
    if (!items)
        return cutune__expr_ev_oom(c);
    out->u.list.items = items;
    for (size_t i = 0; i < n; i++) {
        char *ch = cutune__expr_dup_bytes(s + i, 1);
        if (!ch) {
            cutune__value_clear(out);
            return cutune__expr_ev_oom(c);
        }
        items[i].type = CUTUNE__V_STR;
        items[i].u.s = ch;
        out->u.list.n = i + 1;
    }
    return 0;
}

static int ev_range(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    int64_t arg[3] = {0, 0, 1};
    size_t argc = n->u.seq.n;
    for (size_t i = 0; i < argc; i++) {
        cutune__value t = {0};
        const cutune__value *v;
        if (cutune__expr_ev(c, n->u.seq.v[i], &t, &v))
            return -1;
        int ok = cutune__expr_is_intlike(v);
        int64_t x = ok ? v->u.i : 0;
        const char *tn = cutune__expr_type_name(v);
        cutune__value_clear(&t);
        if (!ok)
            return cutune__expr_ev_fail(
                c, n->pos, n->len, "range() arguments must be int, not %s",
                tn);
        arg[argc == 1 ? 1 : i] = x;
    }
    int64_t start = arg[0], stop = arg[1], step = arg[2];
    if (step == 0)
        return cutune__expr_ev_fail(c, n->pos, n->len,
                                    "range() step must not be zero");
    /* The length, in unsigned arithmetic where the span always fits, before
     * anything is allocated. */
    uint64_t count = 0;
    if (step > 0 && start < stop)
        count = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    else if (step < 0 && start > stop)
        count = ((uint64_t)start - (uint64_t)stop - 1) /
                    ((uint64_t)0 - (uint64_t)step) +
                1;
    if (count > c->e->max_list)
        return cutune__expr_ev_fail(c, n->pos, n->len,
                                    "range produces more than %zu values",
                                    c->e->max_list);
    size_t cnt = (size_t)count;
    if (cutune__expr_charge(c, n->pos, n->len, cnt))
        return -1;
    cutune__value *items = NULL;
    if (cnt && !(items = malloc(cnt * sizeof *items)))
        return cutune__expr_ev_oom(c);
    int64_t x = start;
    for (size_t i = 0; i < cnt; i++) {
        cutune__expr_set_int(&items[i], x);
        if (i + 1 < cnt)
            x += step; /* still inside [start, stop): no overflow */
    }
    tmp->type = CUTUNE__V_LIST;
    tmp->u.list.items = items;
    tmp->u.list.n = cnt;
    *res = tmp;
    return 0;
}

static int ev_minmax(ev_ctx *c, const node *n, cutune__value *tmp,
                     const cutune__value **res)
{
    const int want = n->fn == B_MAX ? OP_GT : OP_LT;
    const char *fname = builtin_names[n->fn];
    operand site = {0};
    site.pos = n->pos;
    site.len = n->len;
    if (n->u.seq.n == 1) {
        cutune__value lt = {0};
        const cutune__value *l;
        if (cutune__expr_ev(c, n->u.seq.v[0], &lt, &l))
            return -1;
        if (l->type != CUTUNE__V_LIST) {
            cutune__expr_ev_fail(c, n->pos, n->len, "%s is not iterable",
                                 cutune__expr_type_name(l));
            goto fail1;
        }
        if (l->u.list.n == 0) {
            cutune__expr_ev_fail(c, n->pos, n->len,
                                 "%s() arg is an empty list", fname);
            goto fail1;
        }
        size_t best = 0;
        for (size_t i = 1; i < l->u.list.n; i++) {
            int better;
            if (cutune__expr_compare(c, &site, want, &l->u.list.items[i],
                                     &l->u.list.items[best], &better))
                goto fail1;
            if (better)
                best = i;
        }
        if (l == &lt) {
            *tmp = lt.u.list.items[best];
            lt.u.list.items[best].type = CUTUNE__V_NONE;
            cutune__value_clear(&lt);
            *res = tmp;
        } else {
            *res = &l->u.list.items[best];
        }
        return 0;
    fail1:
        cutune__value_clear(&lt);
        return -1;
    }
    /* Several arguments: keep only the best so far and the candidate, so
     * max(a, b) on scalars allocates nothing. */
    cutune__value bt = {0}, ct = {0};
    const cutune__value *b = NULL, *cv;
    for (size_t i = 0; i < n->u.seq.n; i++) {
        if (cutune__expr_ev(c, n->u.seq.v[i], &ct, &cv))
            goto fail;
        int better = 1;
        if (b && cutune__expr_compare(c, &site, want, cv, b, &better))
            goto fail;
        if (better) {
            cutune__value_clear(&bt);
            bt = ct;
            ct.type = CUTUNE__V_NONE;
            b = cv == &ct ? &bt : cv;
        } else {
            cutune__value_clear(&ct);
        }
    }
    if (b == &bt) {
        *tmp = bt;
        *res = tmp;
    } else {
        cutune__value_clear(&bt);
        *res = b;
    }
    return 0;
fail:
    cutune__value_clear(&bt);
    cutune__value_clear(&ct);
    return -1;
}

int cutune__expr_ev_call(ev_ctx *c, const node *n, cutune__value *tmp,
                         const cutune__value **res)
{
    if (n->fn == B_RANGE)
        return ev_range(c, n, tmp, res);
    if (n->fn == B_MAX || n->fn == B_MIN)
        return ev_minmax(c, n, tmp, res);
    if (n->fn == B_LIST && n->u.seq.n == 0) {
        cutune__expr_set_empty_list(tmp);
        *res = tmp;
        return 0;
    }
    cutune__value at = {0};
    const cutune__value *a;
    if (cutune__expr_ev(c, n->u.seq.v[0], &at, &a))
        return -1;
    int rc = 0;
    if (n->fn == B_LEN) {
        if (a->type == CUTUNE__V_LIST)
            cutune__expr_set_int(tmp, (int64_t)a->u.list.n);
        else if (a->type == CUTUNE__V_STR)
            cutune__expr_set_int(tmp, (int64_t)strlen(a->u.s));
        else
            rc = cutune__expr_ev_fail(c, n->pos, n->len,
                                      "object of type %s has no len()",
                                      cutune__expr_type_name(a));
    } else if (a->type == CUTUNE__V_LIST) { /* list() */
        rc = cutune__expr_ev_take(c, n, tmp, &at, a);
    } else if (a->type == CUTUNE__V_STR) {
        rc = str_to_list(c, n, a->u.s, tmp);
    } else {
        rc = cutune__expr_ev_fail(c, n->pos, n->len, "%s is not iterable",
                                  cutune__expr_type_name(a));
    }
    cutune__value_clear(&at);
    if (rc) {
        cutune__value_clear(tmp);
        return -1;
    }
    *res = tmp;
    return 0;
}

int cutune__expr_ev_list(ev_ctx *c, const node *n, cutune__value *tmp,
                         const cutune__value **res)
{
    size_t cnt = n->u.seq.n;
    if (cutune__expr_charge(c, n->pos, n->len, cnt))
        return -1;
    cutune__value *items = calloc(cnt, sizeof *items);
    if (!items)
        return cutune__expr_ev_oom(c);
    for (size_t i = 0; i < cnt; i++) {
        cutune__value t = {0};
        const cutune__value *v;
        if (cutune__expr_ev(c, n->u.seq.v[i], &t, &v) ||
            cutune__expr_ev_take(c, n->u.seq.v[i], &items[i], &t, v)) {
            cutune__value_clear(&t);
            while (i--)
                cutune__value_clear(&items[i]);
            free(items);
            return -1;
        }
    }
    tmp->type = CUTUNE__V_LIST;
    tmp->u.list.items = items;
    tmp->u.list.n = cnt;
    *res = tmp;
    return 0;
}

typedef struct vec {
    cutune__value *items;
    size_t n, cap;
} vec;

static int comp_run(ev_ctx *c, const node *n, size_t k, vec *out)
{
    cutune__value t = {0};
    const cutune__value *v;
    if (k == n->u.comp.n) {
        if (out->n == c->e->max_list)
            return cutune__expr_ev_fail(
                c, n->pos, n->len,
                "list comprehension produces more than %zu values",
                c->e->max_list);
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 8;
            if (cap > c->e->max_list)
                cap = c->e->max_list;
            cutune__value *items = realloc(out->items, cap * sizeof *items);
            if (!items)
                return cutune__expr_ev_oom(c);
            out->items = items;
            out->cap = cap;
        }
        if (cutune__expr_ev(c, n->u.comp.elem, &t, &v) ||
            cutune__expr_ev_take(c, n->u.comp.elem, &out->items[out->n], &t,
                                 v)) {
            cutune__value_clear(&t);
            return -1;
        }
        out->n++;
        return 0;
    }
    const clause *cl = &n->u.comp.v[k];
    if (cutune__expr_ev(c, cl->e, &t, &v))
        return -1;
    if (!cl->is_for) {
        int truth = cutune__value_truthy(v);
        cutune__value_clear(&t);
        return truth ? comp_run(c, n, k + 1, out) : 0;
    }
    if (v->type == CUTUNE__V_STR) {
        cutune__value chars;
        int rc = str_to_list(c, cl->e, v->u.s, &chars);
        cutune__value_clear(&t);
        if (rc)
            return -1;
        t = chars;
        v = &t;
    }
    if (v->type != CUTUNE__V_LIST) {
        cutune__expr_ev_fail(c, cl->e->pos, cl->e->len, "%s is not iterable",
                             cutune__expr_type_name(v));
        cutune__value_clear(&t);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < v->u.list.n && !rc; i++) {
        rc = cutune__expr_charge(c, cl->pos, cl->len, 1);
        if (!rc) {
            c->locals[cl->slot] = &v->u.list.items[i];
            rc = comp_run(c, n, k + 1, out);
        }
    }
    cutune__value_clear(&t);
    return rc;
}

int cutune__expr_ev_comp(ev_ctx *c, const node *n, cutune__value *tmp,
                         const cutune__value **res)
{
    vec out = {0};
    if (comp_run(c, n, 0, &out)) {
        for (size_t i = 0; i < out.n; i++)
            cutune__value_clear(&out.items[i]);
        free(out.items);
        return -1;
    }
    tmp->type = CUTUNE__V_LIST;
    tmp->u.list.items = out.items;
    tmp->u.list.n = out.n;
    *res = tmp;
    return 0;
}
