/* Loads a shared libcutune the way Python's ctypes does (dlopen with
 * RTLD_NOW: every symbol resolved at once, or nothing) and calls
 * cutune_version() through dlsym. An internal cutune__ function must not
 * be there to find.
 *
 * usage: dlopen_check LIBRARY VERSION [INTERNAL_SYMBOL] */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: dlopen_check LIBRARY VERSION [SYMBOL]\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_check: %s\n", dlerror());
        return 1;
    }
    const char *(*version)(void) = NULL;
    void *sym = dlsym(lib, "cutune_version");
    memcpy(&version, &sym, sizeof version);
    int rc = 0;
    if (!version || strcmp(version(), argv[2]) != 0) {
        fprintf(stderr, "dlopen_check: cutune_version() is not %s\n", argv[2]);
        rc = 1;
    } else if (argc > 3 && dlsym(lib, argv[3])) {
        fprintf(stderr, "dlopen_check: %s is exported\n", argv[3]);
        rc = 1;
    } else {
        printf("dlopen %s: cutune_version() %s\n", argv[1], version());
    }
    dlclose(lib);
    return rc;
}
