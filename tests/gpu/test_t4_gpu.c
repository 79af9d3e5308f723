/* T4 output of a real tune: every evaluation is written with all its
 * timed runtimes and reads back onto the same space, and the runtimes
 * bear out the early stops and racing. Needs a GPU; skips (exit 77)
 * without one. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "problem.h"
#include "t4.h"
#include "tmpdir.h"

static char dir[] = "/tmp/cutune-t4-gpu-XXXXXX";

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the first n runtimes (as the session sums them up). */
static double search_median(const double *runtimes, size_t n)
{
    if (n == 0)
        return INFINITY;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return INFINITY;
    memcpy(v, runtimes, n * sizeof *v);
    qsort(v, n, sizeof *v, by_value);
    double m = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    free(v);
    return m;
}

/* What the progress callback saw: counts in order, a best that only
 * improves, the budget. */
typedef struct seen {
    size_t calls, out_of_order, budget_wrong, best_worse;
    double best;
} seen;

static void on_progress(void *user, const cutune_progress *pr)
{
    seen *v = user;
    v->calls++;
    v->out_of_order += pr->evaluations != v->calls;
    v->budget_wrong += pr->budget != 40;
    if (isfinite(v->best) && !(pr->best_ms <= v->best))
        v->best_worse++;
    if (isfinite(pr->best_ms))
        v->best = pr->best_ms;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    long long size = 1 << 20;
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "random";
    o.max_evals = 40;
    o.write_cache = 0;
    seen progress = {0, 0, 0, 0, INFINITY};
    o.progress = on_progress;
    o.progress_user = &progress;
    cutune_session *s;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    const cutune_tune_result *r;
    cutune_status st = cutune_session_tune(s, p, &r);
    if (st == CUTUNE_ERR_NO_DEVICE) {
        cutune_session_destroy(s);
        cutune_problem_destroy(p);
        remove_tree(dir);
        return check_skip("no CUDA device");
    }
    CHECK_INT(st, CUTUNE_OK);
    if (st) {
        fprintf(stderr, "%s\n", cutune_session_errmsg(s));
    } else {
        char path[512];
        snprintf(path, sizeof path, "%s/results.json.gz", dir);
        CHECK_INT(cutune_session_write_t4(s, path), CUTUNE_OK);
        cutune__t4 *t4 = NULL;
        char err[512] = "";
        CHECK_INT(cutune__t4_load(path, p, &t4, err, sizeof err), CUTUNE_OK);
        /* The progress callback ran once per evaluation, in order. */
        CHECK_INT(progress.calls, r->n_evals);
        CHECK_INT(progress.out_of_order, 0);
        CHECK_INT(progress.budget_wrong, 0);
        CHECK_INT(progress.best_worse, 0);
        CHECK(isfinite(progress.best));
        if (t4) {
            /* The metadata names the real device and the problem. */
            const cutune__t4_meta *m = &t4->meta;
            CHECK(m->device_name && *m->device_name &&
                  !strstr(m->device_name, "replay"));
            CHECK(m->device_uuid && strncmp(m->device_uuid, "GPU-", 4) == 0);
            CHECK_STR(m->problem_name, "vector_add");
            CHECK_STR(m->strategy, "random");
            CHECK_STR(m->source_hash, cutune_problem_source_hash(p));
            CHECK(m->n_problem_size == 1 && m->problem_size &&
                  m->problem_size[0] == size);
            printf("T4 metadata: device '%s' %s\n", m->device_name,
                   m->device_uuid);
            CHECK_INT(t4->n_entries, r->n_evals);
            CHECK_INT(t4->n_outside, 0);
            /* The stops, from the runtimes kept: a candidate dropped after
             * 5 launches had even its fastest more than 10% slower than
             * the best median before it; one dropped later (racing) had
             * its median more than 3% slower. The best is taken as the
             * search saw it: a finalist's median without its final round
             * (its last final_runs launches). */
            double best = INFINITY;
            size_t early = 0, raced = 0;
            for (size_t i = 0; i < t4->n_entries && i < r->n_evals; i++) {
                const cutune__t4_entry *e = &t4->entries[i];
                if (e->outcome != CUTUNE_OUTCOME_CORRECT)
                    continue;
                if (r->evals[i].stopped_early && e->n_runtimes == 5) {
                    double fastest = INFINITY;
                    for (size_t k = 0; k < e->n_runtimes; k++)
                        fastest = fmin(fastest, e->runtimes[k]);
                    CHECK(fastest > 1.10 * best);
                    early++;
                } else if (r->evals[i].stopped_early) {
                    CHECK(e->n_runtimes >= 10);
                    CHECK(e->time_ms > 1.03 * best);
                    raced++;
                }
                CHECK_INT(e->n_runtimes, r->evals[i].runs);
                best = fmin(best, search_median(e->runtimes,
                                                e->n_runtimes -
                                                    r->evals[i].final_runs));
            }
            printf("vector_add 2^20, random, 40: %zu dropped after 5 "
                   "launches, %zu raced out later\n",
                   early, raced);
            CHECK(early + raced > 0);
            for (size_t i = 0; i < t4->n_entries && i < r->n_evals; i++) {
                const cutune__t4_entry *e = &t4->entries[i];
                CHECK_INT(e->config_index, r->evals[i].config_index);
                CHECK_INT(e->outcome, r->evals[i].outcome);
                if (e->outcome == CUTUNE_OUTCOME_CORRECT) {
                    /* At least the minimum repetitions (10, or the 5 of
                     * a candidate dropped early), all positive. */
                    CHECK(e->n_runtimes >=
                          (r->evals[i].stopped_early ? 5u : 10u));
                    for (size_t k = 0; k < e->n_runtimes; k++)
                        CHECK(e->runtimes[k] > 0);
                    CHECK(isfinite(e->time_ms));
                }
                CHECK(e->compile_ms > 0);
            }
            cutune__t4_free(t4);
        } else {
            fprintf(stderr, "%s\n", err);
        }
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    remove_tree(dir);
    return check_finish();
}
