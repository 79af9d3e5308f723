/* cutune_output_path_check(): the public face of the one way outputs are
 * written (fsio.h). It lives in cache/ beside the plumbing because cache/
 * is the lowest module that may use the public types. */
#include "fsio.h"

#include <stdio.h>

#include "cutune/cutune.h"

cutune_status cutune_output_path_check(const char *path, char *message,
                                       size_t size)
{
    char why[1024];
    int kind = cutune__output_check(path, why, sizeof why);
    if (message && size)
        snprintf(message, size, "%s", kind < 0 ? why : "");
    return kind < 0 ? CUTUNE_ERR_IO : CUTUNE_OK;
}
