/* Name resolution for the T1 expression language: tells comprehension
 * variables from free names and lists the free names by first appearance,
 * which is the order callers bind them in. */
#include "expr_internal.h"

/* ---- name resolution ---- */

/* Comprehension variables can only be told from free names once the whole
 * comprehension is parsed, since the element comes first; so names are
 * resolved in a second walk, in text order, so that free names are listed
 * by first appearance. */
typedef struct scope_entry {
    size_t pos, len, slot;
} scope_entry;

typedef struct resolver {
    cutune__expr *e;
    cutune__expr_error *err;
    scope_entry *stack;
    size_t n, cap;
} resolver;

static int scope_push(resolver *r, const clause *c)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        scope_entry *s = realloc(r->stack, cap * sizeof *s);
        if (!s) {
            cutune__expr_set_oom(r->err);
            return -1;
        }
        r->stack = s;
        r->cap = cap;
    }
    r->stack[r->n].pos = c->pos;
    r->stack[r->n].len = c->len;
    r->stack[r->n].slot = c->slot;
    r->n++;
    return 0;
}

static int resolve_name(resolver *r, node *n)
{
    const char *text = r->e->text;
    for (size_t i = r->n; i-- > 0;) {
        const scope_entry *s = &r->stack[i];
        if (s->len == n->len &&
            memcmp(text + s->pos, text + n->pos, n->len) == 0) {
            n->kind = N_LOCAL;
            n->u.index = s->slot;
            return 0;
        }
    }
    cutune__expr *e = r->e;
    for (size_t i = 0; i < e->n_names; i++) {
        if (cutune__expr_word_is(text + n->pos, n->len, e->names[i])) {
            n->kind = N_VAR;
            n->u.index = i;
            return 0;
        }
    }
    if (e->n_names == e->cap_names) {
        size_t cap = e->cap_names ? e->cap_names * 2 : 8;
        char **names = realloc(e->names, cap * sizeof *names);
        if (!names) {
            cutune__expr_set_oom(r->err);
            return -1;
        }
        e->names = names;
        size_t *pos = realloc(e->name_pos, cap * sizeof *pos);
        if (!pos) {
            cutune__expr_set_oom(r->err);
            return -1;
        }
        e->name_pos = pos;
        e->cap_names = cap;
    }
    char *name = cutune__expr_dup_bytes(text + n->pos, n->len);
    if (!name) {
        cutune__expr_set_oom(r->err);
        return -1;
    }
    e->names[e->n_names] = name;
    e->name_pos[e->n_names] = n->pos;
    n->kind = N_VAR;
    n->u.index = e->n_names++;
    return 0;
}

static int resolve(resolver *r, node *n)
{
    switch (n->kind) {
    case N_NAME: return resolve_name(r, n);
    case N_NEG:
    case N_POS:
    case N_NOT: return resolve(r, n->u.kid[0]);
    case N_INDEX:
        return resolve(r, n->u.kid[0]) || resolve(r, n->u.kid[1]) ? -1 : 0;
    case N_COND:
        return resolve(r, n->u.kid[0]) || resolve(r, n->u.kid[1]) ||
                       resolve(r, n->u.kid[2])
                   ? -1
                   : 0;
    case N_ARITH:
    case N_CMP:
        for (size_t i = 0; i < n->u.chain.n; i++)
            if (resolve(r, n->u.chain.v[i].e))
                return -1;
        return 0;
    case N_AND:
    case N_OR:
    case N_LIST:
    case N_CALL:
        for (size_t i = 0; i < n->u.seq.n; i++)
            if (resolve(r, n->u.seq.v[i]))
                return -1;
        return 0;
    case N_COMP: {
        size_t base = r->n;
        int rc = 0;
        /* The element sees every target; a later one shadows an earlier. */
        for (size_t i = 0; i < n->u.comp.n && !rc; i++)
            if (n->u.comp.v[i].is_for)
                rc = scope_push(r, &n->u.comp.v[i]);
        if (!rc)
            rc = resolve(r, n->u.comp.elem);
        r->n = base;
        for (size_t i = 0; i < n->u.comp.n && !rc; i++) {
            rc = resolve(r, n->u.comp.v[i].e);
            if (!rc && n->u.comp.v[i].is_for)
                rc = scope_push(r, &n->u.comp.v[i]);
        }
        r->n = base;
        return rc;
    }
    default: return 0;
    }
}

int cutune__expr_resolve(cutune__expr *e, cutune__expr_error *err)
{
    resolver r = {0};
    r.e = e;
    r.err = err;
    int rc = resolve(&r, e->root);
    free(r.stack);
    return rc;
}
