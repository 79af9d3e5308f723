/* The on-disk binary cache: hits and misses by the whole key, failed
 * compilations kept with their log, least-recently-used eviction under a
 * size bound, and concurrent writers from many processes. */
#define _GNU_SOURCE

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "binary_cache.h"
#include "check.h"
#include "tmpdir.h"

static char dir[] = "/tmp/cutune-bincache-test-XXXXXX";

static size_t count_entries(const char *path)
{
    DIR *d = opendir(path);
    size_t n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += strstr(de->d_name, ".bin") != NULL;
    if (d)
        closedir(d);
    return n;
}

static char *key_for(int i)
{
    char def[32];
    snprintf(def, sizeof def, "-DUNROLL=%d", i);
    char *opts[] = {def, (char *)"--gpu-architecture=sm_90"};
    return cutune__binary_cache_key("__global__ void k() {}", opts, 2, "13.0");
}

static void test_round_trip(void)
{
    cutune__binary_cache *c = cutune__binary_cache_open(dir, 0);
    CHECK(c != NULL);
    char *k1 = key_for(1), *k2 = key_for(2);
    int ok;
    char *data;
    size_t size;
    CHECK_INT(cutune__binary_cache_get(c, k1, &ok, &data, &size), 0);
    static const char cubin[] = "\x7f"
                                "ELF pretend cubin\0with a NUL";
    cutune__binary_cache_put(c, k1, 1, cubin, sizeof cubin);
    CHECK_INT(cutune__binary_cache_get(c, k1, &ok, &data, &size), 1);
    CHECK_INT(ok, 1);
    CHECK_INT(size, sizeof cubin);
    CHECK(data && memcmp(data, cubin, sizeof cubin) == 0);
    free(data);
    /* Another key is another entry. */
    CHECK_INT(cutune__binary_cache_get(c, k2, &ok, &data, &size), 0);
    /* A failed compilation is kept with its log. */
    const char log[] = "k.cu(1): error: identifier undefined";
    cutune__binary_cache_put(c, k2, 0, log, sizeof log);
    CHECK_INT(cutune__binary_cache_get(c, k2, &ok, &data, &size), 1);
    CHECK_INT(ok, 0);
    CHECK_STR(data, log);
    free(data);

    /* Keys differ for every input that decides the binary. */
    char *opts[] = {(char *)"-DA=1"};
    char *a = cutune__binary_cache_key("src", opts, 1, "13.0");
    char *b = cutune__binary_cache_key("src", opts, 1, "13.1");
    char *d = cutune__binary_cache_key("src2", opts, 1, "13.0");
    char *opts2[] = {(char *)"-DA=1", (char *)""};
    char *e = cutune__binary_cache_key("src", opts2, 2, "13.0");
    CHECK(strcmp(a, b) != 0 && strcmp(a, d) != 0 && strcmp(a, e) != 0);
    free(a);
    free(b);
    free(d);
    free(e);
    free(k1);
    free(k2);
    cutune__binary_cache_close(c);
    cutune__binary_cache_close(NULL);
}

static void test_collision_is_a_miss(void)
{
    /* An entry whose stored key differs (as after a hash collision) must
     * not be returned. Write entry for key A, then rename it to B's file. */
    char sub[256];
    snprintf(sub, sizeof sub, "%s/collide", dir);
    cutune__binary_cache *c = cutune__binary_cache_open(sub, 0);
    char *ka = key_for(10), *kb = key_for(11);
    cutune__binary_cache_put(c, ka, 1, "AAAA", 4);
    DIR *dd = opendir(sub);
    struct dirent *de;
    char from[512] = "";
    while ((de = readdir(dd)))
        if (strstr(de->d_name, ".bin"))
            snprintf(from, sizeof from, "%s/%s", sub, de->d_name);
    closedir(dd);
    /* Find B's file name by storing B, then overwrite it with A's bytes. */
    cutune__binary_cache_put(c, kb, 1, "BBBB", 4);
    char to[512] = "";
    dd = opendir(sub);
    while ((de = readdir(dd))) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", sub, de->d_name);
        if (strstr(de->d_name, ".bin") && strcmp(p, from) != 0)
            snprintf(to, sizeof to, "%s", p);
    }
    closedir(dd);
    CHECK(from[0] && to[0]);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    CHECK_INT(system(cmd), 0);
    int ok;
    char *data;
    size_t size;
    CHECK_INT(cutune__binary_cache_get(c, kb, &ok, &data, &size), 0);
    CHECK_INT(cutune__binary_cache_get(c, ka, &ok, &data, &size), 1);
    free(data);
    free(ka);
    free(kb);
    cutune__binary_cache_close(c);
}

static void test_eviction(void)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/evict", dir);
    /* Room for about 10 entries of 1000 bytes. */
    cutune__binary_cache *c = cutune__binary_cache_open(sub, 10 * 1200);
    char blob[1000];
    memset(blob, 'x', sizeof blob);
    char *keys[20];
    for (int i = 0; i < 20; i++) {
        keys[i] = key_for(100 + i);
        cutune__binary_cache_put(c, keys[i], 1, blob, sizeof blob);
        /* Distinct modification times give a definite LRU order. */
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    /* Touch entry 0, so it is the most recently used. */
    int ok;
    char *data;
    size_t size;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    CHECK_INT(cutune__binary_cache_get(c, keys[0], &ok, &data, &size), 1);
    free(data);
    cutune__binary_cache_evict(c);
    size_t left = count_entries(sub);
    CHECK(left >= 5 && left <= 9);
    /* The touched entry and the newest survive; the oldest are gone. */
    CHECK_INT(cutune__binary_cache_get(c, keys[0], &ok, &data, &size), 1);
    free(data);
    CHECK_INT(cutune__binary_cache_get(c, keys[19], &ok, &data, &size), 1);
    free(data);
    CHECK_INT(cutune__binary_cache_get(c, keys[1], &ok, &data, &size), 0);
    for (int i = 0; i < 20; i++)
        free(keys[i]);
    cutune__binary_cache_close(c);
}

static void test_concurrent_writers(void)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/concurrent", dir);
    enum { PROCS = 8, KEYS = 40 };
    for (int p = 0; p < PROCS; p++) {
        if (fork() == 0) {
            cutune__binary_cache *c = cutune__binary_cache_open(sub, 0);
            /* All processes write the same keys with the same content, as
             * concurrent tunes of one problem would. */
            for (int i = 0; i < KEYS; i++) {
                char *k = key_for(1000 + i);
                char blob[4096];
                memset(blob, 'a' + i % 26, sizeof blob);
                cutune__binary_cache_put(c, k, 1, blob, sizeof blob);
                free(k);
            }
            cutune__binary_cache_close(c);
            _exit(0);
        }
    }
    for (int p = 0; p < PROCS; p++)
        wait(NULL);
    cutune__binary_cache *c = cutune__binary_cache_open(sub, 0);
    int whole = 0;
    for (int i = 0; i < KEYS; i++) {
        char *k = key_for(1000 + i);
        int ok;
        char *data;
        size_t size;
        if (cutune__binary_cache_get(c, k, &ok, &data, &size) && ok &&
            size == 4096 && data[0] == 'a' + i % 26 && data[4095] == data[0])
            whole++;
        free(data);
        free(k);
    }
    CHECK_INT(whole, KEYS);
    CHECK_INT(count_entries(sub), KEYS);
    cutune__binary_cache_close(c);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trip();
    test_collision_is_a_miss();
    test_eviction();
    test_concurrent_writers();
    remove_tree(dir);
    return check_finish();
}
