/* The additive model of what trying a configuration costs (cost_model.h). */
#include "cost_model.h"

#include <stdlib.h>
#include <string.h>

int cutune__cost_model_init(cutune__cost_model *m, const cutune__space *space)
{
    size_t np = cutune__space_param_count(space), n_values = 0;
    memset(m, 0, sizeof *m);
    m->space = space;
    m->told_index = CUTUNE__NONE;
    m->varying = malloc((np ? np : 1) * sizeof *m->varying);
    m->off = malloc((np ? np : 1) * sizeof *m->off);
    if (!m->varying || !m->off) {
        cutune__cost_model_free(m);
        return -1;
    }
    for (size_t p = 0; p < np; p++) {
        size_t nv = cutune__space_value_count(space, p);
        if (nv < 2)
            continue;
        m->off[m->d] = n_values;
        m->varying[m->d++] = p;
        n_values += nv;
    }
    m->sum = calloc(n_values ? n_values : 1, sizeof *m->sum);
    m->count = calloc(n_values ? n_values : 1, sizeof *m->count);
    if (!m->sum || !m->count) {
        cutune__cost_model_free(m);
        return -1;
    }
    return 0;
}

void cutune__cost_model_free(cutune__cost_model *m)
{
    free(m->count);
    free(m->sum);
    free(m->off);
    free(m->varying);
    memset(m, 0, sizeof *m);
    m->told_index = CUTUNE__NONE;
}

void cutune__cost_model_learn(cutune__cost_model *m, size_t index,
                              double log_seconds)
{
    const uint32_t *c = cutune__space_config(m->space, index);
    for (size_t j = 0; j < m->d; j++) {
        size_t at = m->off[j] + c[m->varying[j]];
        m->sum[at] += log_seconds;
        m->count[at] += 1;
    }
    m->total += log_seconds;
    m->n++;
}

double cutune__cost_model_relative(const cutune__cost_model *m, size_t index)
{
    if (m->n == 0)
        return 0;
    const uint32_t *c = cutune__space_config(m->space, index);
    double mean = m->total / (double)m->n, dev = 0;
    for (size_t j = 0; j < m->d; j++) {
        size_t at = m->off[j] + c[m->varying[j]];
        double k = m->count[at];
        if (k > 0)
            dev += (m->sum[at] / k - mean) * k / (k + CUTUNE__COST_PRIOR);
    }
    return dev;
}

double cutune__cost_model_predict(const cutune__cost_model *m, size_t index)
{
    if (m->n == 0)
        return NAN;
    return m->total / (double)m->n + cutune__cost_model_relative(m, index);
}

void cutune__cost_model_settle(cutune__cost_model *m, size_t index, int fresh)
{
    int told = m->told_index == index;
    m->told_index = CUTUNE__NONE;
    if (told && fresh)
        cutune__cost_model_learn(m, index, m->told);
}
