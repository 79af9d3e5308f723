/* The device part of cache queries (lookup, export, check): --device N,
 * --device-name NAME, --cc X.Y, --sm-count N, --no-fallback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_cc(const char *s, int *major, int *minor)
{
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || *end != '.' || a <= 0 || a > 1000)
        return 0;
    const char *m = end + 1;
    long b = strtol(m, &end, 10);
    if (end == m || *end || b < 0 || b > 1000)
        return 0;
    *major = (int)a;
    *minor = (int)b;
    return 1;
}

void cli_problem_query(const cutune_problem *p, long long dims[8],
                       cutune_cache_query *q)
{
    q->problem_name = cutune_problem_name(p);
    q->n_problem_size = cutune_problem_size_dims(p);
    if (q->n_problem_size > 8)
        q->n_problem_size = 8;
    for (size_t d = 0; d < q->n_problem_size; d++)
        dims[d] = cutune_problem_size(p, d);
    q->problem_size = dims;
    q->accept = cutune_problem_accepts_record;
    q->accept_user = (void *)p;
}

int cli_device_query(const cli_device_opts *o, cutune_device *fp,
                     cutune_cache_query *q)
{
    memset(fp, 0, sizeof *fp);
    if (o->device >= 0 && o->name)
        return cli_usage_error("give --device or --device-name, not both");
    if ((o->cc || o->sm_count >= 0) && !o->name)
        return cli_usage_error("--cc and --sm-count go with --device-name "
                               "(--device reads them from the GPU)");
    q->fallback = !o->no_fallback;
    if (o->name) {
        q->device_name = o->name;
        if (o->cc && !parse_cc(o->cc, &q->cc_major, &q->cc_minor))
            return cli_usage_error("--cc: '%s' is not a compute capability "
                                   "such as 9.0",
                                   o->cc);
        q->sm_count = o->sm_count > 0 ? (int)o->sm_count : 0;
        return 0;
    }
    long long ordinal = o->device < 0 ? 0 : o->device;
    cutune_session *s;
    const cutune_device *devs = NULL;
    size_t n = 0;
    cutune_status st = cutune_session_create(NULL, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_devices(s, &devs, &n);
    int rc = 0;
    if (st) {
        cli_print_error(cutune_session_errmsg(s), st);
        if (st == CUTUNE_ERR_NO_DEVICE && !o->one_line)
            fputs("cutune: without a GPU, name the device with "
                  "--device-name\n",
                  stderr);
        rc = cli_exit_code(st);
    } else if (ordinal >= (long long)n) {
        rc = cli_usage_error("--device: device %lld does not exist (%zu "
                             "found)",
                             ordinal, n);
    } else {
        *fp = devs[ordinal];
    }
    cutune_session_destroy(s);
    if (rc == 0) {
        q->device_uuid = fp->uuid;
        q->device_name = fp->name;
        q->cc_major = fp->cc_major;
        q->cc_minor = fp->cc_minor;
        q->sm_count = fp->sm_count;
    }
    return rc;
}

void cli_cache_warning(const cutune_cache *cache)
{
    const char *w = cutune_cache_warning(cache);
    if (w && w[0])
        fprintf(stderr, "cutune: warning: %s\n", w);
}
