/* The order in which enumeration binds parameters, chosen from sampled
 * pass rates of the conditions. Apart from enumeration because it changes
 * only the speed of construction, never the result. */
#include "space_internal.h"

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
            if (p == CUTUNE__NONE)
                continue;
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            cfg[p] = (uint32_t)((state >> 33) % s->n_values[p]);
        }
        passed += cutune__space_check_condition(b, pc, cfg, NULL) != 0;
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
    size_t k;         /* parameters ordered */
    size_t *param;    /* k: the parameter of each position */
    double *log_size; /* k: log of its value count */
    size_t nc;        /* conditions naming any of them */
    double *log_rate; /* nc */
    size_t **members; /* nc lists of positions, each ended by CUTUNE__NONE */
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
    if (!mask || !by_pos_start || !best || !count || !log_count || !complete ||
        !last)
        goto out;
    size_t members = 0;
    for (size_t c = 0; c < nc; c++)
        for (const size_t *q = m->members[c]; *q != CUTUNE__NONE; q++) {
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
            for (const size_t *q = m->members[c]; *q != CUTUNE__NONE; q++)
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
        for (const size_t *q = m->members[c]; *q != CUTUNE__NONE; q++)
            left[c]++;
    for (size_t d = 0; d < k; d++) {
        for (size_t q = 0; q < k; q++)
            gain[q] = m->log_size[q];
        for (size_t c = 0; c < nc; c++) {
            if (left[c] != 1)
                continue;
            for (const size_t *q = m->members[c]; *q != CUTUNE__NONE; q++)
                if (!bound[*q])
                    gain[*q] += m->log_rate[c];
        }
        size_t pick = CUTUNE__NONE;
        for (size_t q = 0; q < k; q++)
            if (!bound[q] && (pick == CUTUNE__NONE || gain[q] < gain[pick]))
                pick = q;
        out[d] = pick;
        bound[pick] = 1;
        for (size_t c = 0; c < nc; c++)
            for (const size_t *q = m->members[c]; *q != CUTUNE__NONE; q++)
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
            for (const size_t *r = m->members[c]; *r != CUTUNE__NONE; r++) {
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

void cutune__space_choose_order(builder *b)
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
            if (b->conds[c].param_of[i] != CUTUNE__NONE)
                named[b->conds[c].param_of[i]] = 1;
    for (size_t p = 0; p < np; p++) {
        pos[p] = CUTUNE__NONE;
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
            if (pc->param_of[i] != CUTUNE__NONE &&
                pos[pc->param_of[i]] != CUTUNE__NONE)
                list[n++] = pos[pc->param_of[i]];
        list[n] = CUTUNE__NONE;
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
