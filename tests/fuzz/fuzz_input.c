/* Scratch files and messages for the reader fuzz targets. */
#define _POSIX_C_SOURCE 200809L

#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tmpdir.h"

static char scratch[64];
static char path_buf[128];
static char message[1024];

static void remove_scratch(void)
{
    remove_tree(scratch);
}

const char *cutune_fuzz_path(const char *name)
{
    if (!scratch[0]) {
        /* tmpfs when there is one: libFuzzer writes every input. */
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(scratch, sizeof scratch, "%s/cutune-fuzz-XXXXXX", base);
        if (!mkdtemp(scratch)) {
            scratch[0] = '\0';
            return NULL;
        }
        atexit(remove_scratch);
    }
    snprintf(path_buf, sizeof path_buf, "%s/%s", scratch, name);
    return path_buf;
}

const char *cutune_fuzz_write(const char *name, const uint8_t *data,
                              size_t size)
{
    const char *path = cutune_fuzz_path(name);
    FILE *f = path ? fopen(path, "wb") : NULL;
    if (!f)
        return NULL;
    int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok)
        return NULL;
    return path;
}

void cutune_fuzz_set_message(const char *text)
{
    snprintf(message, sizeof message, "%s", text ? text : "");
}

const char *cutune_fuzz_message(void)
{
    return message;
}
