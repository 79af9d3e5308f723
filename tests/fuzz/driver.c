/* The plain driver: runs a fuzz target, without libFuzzer, over files and
 * folders of inputs (the seed corpus, the regression inputs, generated
 * mutations), so the build and CI run them with any compiler. An input
 * X with a file X.expect beside it must be refused or warned about with
 * a message that contains the first line of X.expect.
 *
 * Usage: fuzz_TARGET_replay [--mutate N] PATH...
 *   --mutate N: also runs N mutations (byte flips, cuts, repeats, splices)
 *               of each input, from a fixed seed; prints the count. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_input.h"

/* The reader targets define it; the expression targets do not. */
__attribute__((weak)) const char *cutune_fuzz_message(void);

static size_t runs, failures;
static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned long long next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static void check_expectation(const char *path)
{
    char expect_path[4096];
    snprintf(expect_path, sizeof expect_path, "%s.expect", path);
    size_t len;
    unsigned char *want = read_file(expect_path, &len);
    if (!want)
        return;
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)len, (const char *)want);
    line[strcspn(line, "\n")] = '\0';
    free(want);
    const char *got = cutune_fuzz_message ? cutune_fuzz_message() : "";
    if (!strstr(got, line)) {
        failures++;
        fprintf(stderr,
                "FAILED: %s: expected a message containing '%s', "
                "got '%s'\n",
                path, line, got);
    }
}

/* One mutation of `in` into `out` (room for 2 * n + 16 bytes). */
static size_t mutate(const unsigned char *in, size_t n, unsigned char *out)
{
    memcpy(out, in, n);
    size_t at = n ? next_random() % n : 0;
    switch (next_random() % 5) {
    case 0: /* flip a byte */
        if (n)
            out[at] ^= (unsigned char)(1u << (next_random() % 8));
        return n;
    case 1: /* cut short */ return at;
    case 2: /* an interesting byte */
        if (n)
            out[at] = "\0\"{}[]:,-0e\\\xff"[next_random() % 13];
        return n;
    case 3: { /* repeat a stretch */
        size_t len = n - at < 16 ? n - at : 16;
        memmove(out + at + len, out + at, n - at);
        return n + len;
    }
    default: /* splice in a number */
    {
        static const char *const numbers[] = {
            "-1",     "0",  "1e308", "-0.0", "9223372036854775808",
            "1e-320", "NaN"};
        const char *s = numbers[next_random() % 7];
        size_t len = strlen(s) < 16 ? strlen(s) : 16;
        memcpy(out + at, s, len);
        return at + len > n ? at + len : n;
    }
    }
}

static void run_file(const char *path, size_t mutations)
{
    size_t len;
    unsigned char *data = read_file(path, &len);
    if (!data) {
        failures++;
        fprintf(stderr, "FAILED: cannot read %s\n", path);
        return;
    }
    LLVMFuzzerTestOneInput(data, len);
    runs++;
    check_expectation(path);
    unsigned char *m = mutations ? malloc(2 * len + 16) : NULL;
    for (size_t i = 0; m && i < mutations; i++) {
        LLVMFuzzerTestOneInput(m, mutate(data, len, m));
        runs++;
    }
    free(m);
    free(data);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path, size_t mutations)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        failures++;
        fprintf(stderr, "FAILED: no such input %s\n", path);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path, mutations);
        return;
    }
    DIR *d = opendir(path);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' ||
            (len > 7 && strcmp(de->d_name + len - 7, ".expect") == 0))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown)
            break;
        names = grown;
        names[n] = malloc(strlen(path) + len + 2);
        if (!names[n])
            break;
        sprintf(names[n], "%s/%s", path, de->d_name);
        n++;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        run_path(names[i], mutations);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    size_t mutations = 0;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--mutate") == 0) {
        mutations = strtoull(argv[2], NULL, 10);
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: %s [--mutate N] PATH...\n", argv[0]);
        return 2;
    }
    for (int i = first; i < argc; i++)
        run_path(argv[i], mutations);
    printf("%zu inputs run, %zu failed\n", runs, failures);
    return failures == 0 && runs > 0 ? 0 : 1;
}
