/* A batch's compile jobs: its proposals in order, each of the first few
 * followed by what the strategy names ahead of it, never twice, never a
 * proposal of the batch, nothing for a proposal answered without
 * compiling. */
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "replay/batch_jobs.h"

/* Names index + 100, then index + 200; 2 is named ahead of 1 (a proposal
 * of the batch), and 7 names 105 like 5 does (a duplicate). */
static size_t fake_ahead(void *ctx, size_t index, size_t *out, size_t cap)
{
    size_t k = 0, names[2] = {index + 100, index + 200};
    (*(size_t *)ctx)++;
    if (index == 1)
        names[0] = 2;
    if (index == 7)
        names[0] = 105;
    for (; k < cap && k < 2; k++)
        out[k] = names[k];
    return k;
}

static void check_jobs(const size_t *got, size_t n_got, const size_t *want,
                       size_t n_want)
{
    CHECK_INT(n_got, n_want);
    for (size_t i = 0; i < n_got && i < n_want; i++)
        CHECK_INT(got[i], want[i]);
}

int main(void)
{
    size_t jobs[32], job_of[8], named, asked = 0;

    /* Two proposals get one name each; the rest follow as proposed. */
    const size_t p1[] = {3, 4, 5, 6};
    size_t n = cutune__batch_jobs(p1, 4, NULL, 2, 1, fake_ahead, &asked, jobs,
                                  job_of, &named);
    const size_t w1[] = {3, 103, 4, 104, 5, 6};
    check_jobs(jobs, n, w1, 6);
    CHECK_INT(named, 2);
    CHECK_INT(asked, 2);
    CHECK_INT(job_of[0], 0);
    CHECK_INT(job_of[1], 2);
    CHECK_INT(job_of[2], 4);
    CHECK_INT(job_of[3], 5);

    /* A proposal answered from the log is not compiled and not counted
     * among the first ones; two names each. */
    const unsigned char skip[] = {1, 0, 0, 0};
    asked = 0;
    n = cutune__batch_jobs(p1, 4, skip, 2, 2, fake_ahead, &asked, jobs, job_of,
                           &named);
    const size_t w2[] = {4, 104, 204, 5, 105, 205, 6};
    check_jobs(jobs, n, w2, 7);
    CHECK_INT(named, 4);
    CHECK_INT(asked, 2);
    CHECK_INT(job_of[1], 0);
    CHECK_INT(job_of[2], 3);
    CHECK_INT(job_of[3], 6);

    /* Never a proposal of the batch, never a job twice. */
    const size_t p3[] = {1, 5, 7, 2};
    n = cutune__batch_jobs(p3, 4, NULL, 3, 1, fake_ahead, &asked, jobs, job_of,
                           &named);
    const size_t w3[] = {1, 5, 105, 7, 2};
    check_jobs(jobs, n, w3, 5);
    CHECK_INT(named, 1);

    /* Without a strategy's `ahead`, or with no room for it, the proposals
     * alone. */
    const size_t w4[] = {3, 4, 5, 6};
    n = cutune__batch_jobs(p1, 4, NULL, 2, 1, NULL, NULL, jobs, job_of,
                           &named);
    check_jobs(jobs, n, w4, 4);
    CHECK_INT(named, 0);
    asked = 0;
    n = cutune__batch_jobs(p1, 4, NULL, 0, 1, fake_ahead, &asked, jobs, job_of,
                           &named);
    check_jobs(jobs, n, w4, 4);
    CHECK_INT(asked, 0);
    return check_finish();
}
