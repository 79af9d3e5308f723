/* cutune devices: the CUDA devices and their fingerprints. */
#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune devices [--json]\n"
    "\n"
    "Lists the CUDA devices with the fingerprint their tuning results are\n"
    "cached under.\n";

int cli_cmd_devices(int argc, char **argv)
{
    int json = 0, help;
    const cli_opt opts[] = {{"--json", CLI_FLAG, &json}, {NULL, 0, NULL}};
    int rc = cli_parse(argc, argv, opts, NULL, 0, NULL, &help);
    if (rc || help) {
        if (help)
            fputs(usage, stdout);
        return rc;
    }
    cutune_session *s;
    cutune_status st = cutune_session_create(NULL, &s);
    const cutune_device *devs = NULL;
    size_t n = 0;
    if (st == CUTUNE_OK)
        st = cutune_session_devices(s, &devs, &n);
    if (st) {
        cli_print_error(cutune_session_errmsg(s), st);
        cutune_session_destroy(s);
        return cli_exit_code(st);
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const cutune_device *d = &devs[i];
        if (json) {
            json_array_append_new(arr, cli_device_json(d));
            continue;
        }
        printf("%zu: %s\n   uuid %s, compute capability %d.%d, %d SMs, "
               "L2 %.1f MiB, memory %.1f GiB\n   driver %d, NVRTC %s, "
               "cutune %s\n",
               i, d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count,
               (double)d->l2_bytes / (1 << 20),
               (double)d->memory_bytes / (1 << 30), d->driver_version,
               d->nvrtc_version, d->cutune_version);
    }
    if (json)
        cli_print_json(arr);
    else
        json_decref(arr);
    cutune_session_destroy(s);
    return CLI_EXIT_OK;
}
