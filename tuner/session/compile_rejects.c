/* Grouping NVRTC's rejections. A space rejected for one reason gives one
 * log per configuration, alike but for the values NVRTC quotes (the 2 of
 * "Too_big<2>" where the configuration has UNROLL=2): each log is masked,
 * every word that is one of its own configuration's values (of the
 * parameters that have more than one) replaced by one marker, and the
 * configurations whose masked logs are equal form a group. Line numbers
 * ("kernel.cu(12)") and the closing count ("1 error detected") are left
 * as they are: they are not the configuration's, and masking them where
 * they happen to equal a value would split a group. A group names the
 * values all its members share: what the reader changes to get past it. */
#define _POSIX_C_SOURCE 200809L

#include "compile_rejects.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "problem.h"
#include "space/space.h"

struct cutune__rejects {
    cutune_rejected_group *groups;
    size_t n;
};

typedef struct member {
    size_t config;
    size_t order; /* position in the caller's list */
    char *key;    /* the masked log */
} member;

static int word_char(const char *s, size_t i, size_t len)
{
    unsigned char c = (unsigned char)s[i];
    if (isalnum(c) || c == '_')
        return 1;
    /* "0.5" is one word; the full stop ending a sentence is not. */
    return c == '.' && i > 0 && i + 1 < len &&
           isdigit((unsigned char)s[i - 1]) &&
           isdigit((unsigned char)s[i + 1]);
}

/* The word log[i..j) is a line number or the error count. */
static int kept_as_is(const char *log, size_t i, size_t j)
{
    if (i >= 2 && log[i - 1] == '(' && log[j] == ')' &&
        !isspace((unsigned char)log[i - 2]))
        return 1;
    return (i == 0 || log[i - 1] == '\n') &&
           (strncmp(log + j, " error", 6) == 0 ||
            strncmp(log + j, " warning", 8) == 0);
}

static int own_value(const cutune_problem *p, const uint32_t *cfg,
                     const char *w, size_t wl)
{
    for (size_t k = 0; k < p->n_params; k++) {
        const char *v = p->value_texts[k][cfg[k]];
        if (cutune__space_value_count(p->space, k) > 1 && strlen(v) == wl &&
            memcmp(v, w, wl) == 0)
            return 1;
    }
    return 0;
}

static char *mask_log(const cutune_problem *p, size_t config, const char *log)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    size_t len = strlen(log), o = 0;
    char *out = malloc(len + 1); /* a masked word is one character */
    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        if (!word_char(log, i, len)) {
            out[o++] = log[i++];
            continue;
        }
        size_t j = i;
        while (j < len && word_char(log, j, len))
            j++;
        if (!kept_as_is(log, i, j) && own_value(p, cfg, log + i, j - i)) {
            out[o++] = '\1';
        } else {
            memcpy(out + o, log + i, j - i);
            o += j - i;
        }
        i = j;
    }
    out[o] = '\0';
    return out;
}

static int by_key(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int by_size(const void *a, const void *b)
{
    const cutune_rejected_group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The values members[0..n) all have, into g->shared. Returns -1 when
 * memory ran out. */
static int shared_values(const cutune_problem *p, const member *members,
                         size_t n, cutune_rejected_group *g)
{
    cutune_param_value *v = calloc(p->n_params ? p->n_params : 1, sizeof *v);
    if (!v)
        return -1;
    g->shared = v;
    const uint32_t *first = cutune__space_config(p->space, members[0].config);
    for (size_t k = 0; k < p->n_params; k++) {
        if (cutune__space_value_count(p->space, k) < 2)
            continue;
        size_t m = 1;
        while (m < n && cutune__space_config(p->space, members[m].config)[k] ==
                            first[k])
            m++;
        if (m < n)
            continue;
        v[g->n_shared].name = strdup(p->param_names[k]);
        v[g->n_shared].value = strdup(p->value_texts[k][first[k]]);
        g->n_shared++;
        if (!v[g->n_shared - 1].name || !v[g->n_shared - 1].value)
            return -1;
    }
    return 0;
}

/* Runs of equal keys in the sorted members, one group each. */
static int make_groups(cutune__rejects *r, const cutune_problem *p,
                       const member *members, size_t n,
                       const char *const *logs)
{
    for (size_t a = 0, b; a < n; a = b) {
        b = a + 1;
        while (b < n && strcmp(members[a].key, members[b].key) == 0)
            b++;
        cutune_rejected_group *g = &r->groups[r->n++];
        g->count = b - a;
        g->first = members[a].config;
        const char *log = logs[members[a].order];
        g->log = strdup(log ? log : "");
        if (!g->log || shared_values(p, members + a, b - a, g) != 0)
            return -1;
    }
    qsort(r->groups, r->n, sizeof *r->groups, by_size);
    return 0;
}

cutune__rejects *cutune__rejects_group(const cutune_problem *p,
                                       const size_t *configs,
                                       const char *const *logs, size_t n)
{
    cutune__rejects *r = calloc(1, sizeof *r);
    member *members = calloc(n ? n : 1, sizeof *members);
    int ok = r && members &&
             (r->groups = calloc(n ? n : 1, sizeof *r->groups)) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        members[i].config = configs[i];
        members[i].order = i;
        members[i].key = mask_log(p, configs[i], logs[i] ? logs[i] : "");
        ok = members[i].key != NULL;
    }
    if (ok) {
        qsort(members, n, sizeof *members, by_key);
        ok = make_groups(r, p, members, n, logs) == 0;
    }
    for (size_t i = 0; members && i < n; i++)
        free(members[i].key);
    free(members);
    if (!ok) {
        cutune__rejects_free(r);
        return NULL;
    }
    return r;
}

void cutune__rejects_free(cutune__rejects *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        cutune_param_value *v = (cutune_param_value *)r->groups[i].shared;
        for (size_t k = 0; v && k < r->groups[i].n_shared; k++) {
            free((char *)v[k].name);
            free((char *)v[k].value);
        }
        free(v);
        free((char *)r->groups[i].log);
    }
    free(r->groups);
    free(r);
}

size_t cutune__rejects_count(const cutune__rejects *r)
{
    return r ? r->n : 0;
}

const cutune_rejected_group *cutune__rejects_get(const cutune__rejects *r,
                                                 size_t i)
{
    return r && i < r->n ? &r->groups[i] : NULL;
}
