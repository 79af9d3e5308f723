/* A minimal assertion harness for CTest: each test program counts its
 * checks and ends with check_finish(), which prints "N passed, N failed"
 * and returns the process exit code. A GPU test that finds no device calls
 * check_skip() and CTest reports it as skipped (exit code 77). */
#ifndef CUTUNE_TESTS_CHECK_H
#define CUTUNE_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check__passed;
static int check__failed;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (cond) {                                                           \
            check__passed++;                                                  \
        } else {                                                              \
            check__failed++;                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
        }                                                                     \
    } while (0)

#define CHECK_INT(a, b)                                                       \
    do {                                                                      \
        long long check__a = (long long)(a), check__b = (long long)(b);       \
        if (check__a == check__b) {                                           \
            check__passed++;                                                  \
        } else {                                                              \
            check__failed++;                                                  \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",         \
                    __FILE__, __LINE__, #a, #b, check__a, check__b);          \
        }                                                                     \
    } while (0)

#define CHECK_STR(a, b)                                                       \
    do {                                                                      \
        const char *check__a = (a), *check__b = (b);                          \
        if (check__a && check__b && strcmp(check__a, check__b) == 0) {        \
            check__passed++;                                                  \
        } else {                                                              \
            check__failed++;                                                  \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",     \
                    __FILE__, __LINE__, #a, #b,                               \
                    check__a ? check__a : "(null)",                           \
                    check__b ? check__b : "(null)");                          \
        }                                                                     \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                      \
    do {                                                                      \
        const char *check__h = (haystack), *check__n = (needle);              \
        if (check__h && check__n && strstr(check__h, check__n)) {             \
            check__passed++;                                                  \
        } else {                                                              \
            check__failed++;                                                  \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n",        \
                    __FILE__, __LINE__, check__h ? check__h : "(null)",       \
                    check__n ? check__n : "(null)");                          \
        }                                                                     \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                 \
    do {                                                                      \
        double check__a = (a), check__b = (b);                                \
        if (fabs(check__a - check__b) <= (tol)) {                             \
            check__passed++;                                                  \
        } else {                                                              \
            check__failed++;                                                  \
            fprintf(stderr, "%s:%d: %s ~ %s failed: %g vs %g\n", __FILE__,    \
                    __LINE__, #a, #b, check__a, check__b);                    \
        }                                                                     \
    } while (0)

static inline int check_finish(void)
{
    printf("%d passed, %d failed\n", check__passed, check__failed);
    return check__failed == 0 && check__passed > 0 ? 0 : 1;
}

#define CHECK_SKIP_CODE 77

static inline int check_skip(const char *why)
{
    printf("SKIPPED: %s\n", why);
    return CHECK_SKIP_CODE;
}

#endif
