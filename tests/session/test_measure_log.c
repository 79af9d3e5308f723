/* The measurement log behind `cutune tune --resume`: records survive a
 * reopen with every field, the last record of a configuration wins, torn
 * and foreign lines are skipped and counted, values JSON cannot hold come
 * back as NaN, and many processes appending at once leave whole lines. */
#define _GNU_SOURCE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "check.h"
#include "measure_log.h"

static char dir[] = "/tmp/cutune-measure-log-test-XXXXXX";

static cutune__measured sample(const char *config, double ms)
{
    static double runtimes[3];
    runtimes[0] = ms;
    runtimes[1] = ms * 1.01;
    runtimes[2] = ms * 0.99;
    cutune__measured m = {
        .config = (char *)config,
        .grid = {64, 2, 1},
        .block = {256, 1, 1},
        .outcome = CUTUNE_OUTCOME_CORRECT,
        .time_ms = ms,
        .min_ms = ms * 0.99,
        .stddev_ms = 0.01,
        .ci_lo_ms = ms * 0.995,
        .ci_hi_ms = ms * 1.005,
        .gpu_ms = 3.5 * ms,
        .compile_ms = 120.0,
        .framework_ms = 4.0,
        .stopped_early = 1,
        .sm_clock_mhz = 1980,
        .temperature_c = 41,
        .timestamp = 1790000000.0,
        .message = "",
        .runtimes = runtimes,
        .runs = 3,
    };
    return m;
}

static char *path_of(const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 16);
    sprintf(p, "%s/measurements/%s", dir, name);
    return p;
}

static void test_roundtrip(void)
{
    char *path = path_of("roundtrip.jsonl");
    char err[256];
    cutune__measure_log *log =
        cutune__measure_log_open(path, 1, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_count(log), 0);
    CHECK(cutune__measure_log_find(log, "A=1") == NULL);
    cutune__measured a = sample("A=1 B=2", 1.5);
    CHECK_INT(cutune__measure_log_append(log, &a), 0);
    cutune__measured f = {.config = "A=2 B=2",
                          .grid = {1, 1, 1},
                          .block = {32, 1, 1},
                          .outcome = CUTUNE_OUTCOME_COMPILE,
                          .time_ms = NAN,
                          .min_ms = NAN,
                          .ci_lo_ms = INFINITY,
                          .ci_hi_ms = NAN,
                          .message = "error: \"x\" undefined\n"};
    CHECK_INT(cutune__measure_log_append(log, &f), 0);
    /* Measured again later, as a finalist whose last two launches are the
     * final round's: the second record is the one found. */
    cutune__measured again = sample("A=1 B=2", 1.25);
    again.final_runs = 2;
    CHECK_INT(cutune__measure_log_append(log, &again), 0);
    cutune__measure_log_close(log);

    log = cutune__measure_log_open(path, 1, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_count(log), 3);
    CHECK_INT(cutune__measure_log_skipped(log), 0);
    const cutune__measured *m = cutune__measure_log_find(log, "A=1 B=2");
    CHECK(m != NULL);
    if (m) {
        CHECK_NEAR(m->time_ms, 1.25, 1e-12);
        CHECK_INT(m->outcome, CUTUNE_OUTCOME_CORRECT);
        CHECK_INT(m->grid[0], 64);
        CHECK_INT(m->grid[1], 2);
        CHECK_INT(m->block[0], 256);
        CHECK_INT(m->runs, 3);
        CHECK_INT(m->final_runs, 2);
        CHECK_NEAR(m->runtimes[1], 1.25 * 1.01, 1e-12);
        CHECK_NEAR(m->ci_hi_ms, 1.25 * 1.005, 1e-12);
        CHECK_NEAR(m->compile_ms, 120.0, 1e-12);
        CHECK_INT(m->stopped_early, 1);
        CHECK_INT(m->sm_clock_mhz, 1980);
        CHECK_INT(m->temperature_c, 41);
    }
    m = cutune__measure_log_find(log, "A=2 B=2");
    CHECK(m != NULL);
    if (m) {
        CHECK_INT(m->outcome, CUTUNE_OUTCOME_COMPILE);
        CHECK(isnan(m->time_ms));
        CHECK(isnan(m->ci_lo_ms));
        CHECK_STR(m->message, "error: \"x\" undefined\n");
        CHECK_INT(m->runs, 0);
        CHECK_INT(m->final_runs, 0);
    }
    /* Not a prefix match. */
    CHECK(cutune__measure_log_find(log, "A=1 B=") == NULL);
    CHECK(cutune__measure_log_find(log, "A=1 B=22") == NULL);
    /* Without load, nothing is read but appends still work. */
    cutune__measure_log_close(log);
    log = cutune__measure_log_open(path, 0, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_count(log), 0);
    CHECK(cutune__measure_log_find(log, "A=1 B=2") == NULL);
    cutune__measure_log_close(log);
    free(path);
}

static void test_bad_lines(void)
{
    char *path = path_of("bad.jsonl");
    char err[256];
    cutune__measure_log *log =
        cutune__measure_log_open(path, 0, err, sizeof err);
    cutune__measured a = sample("X=1", 2.0);
    CHECK_INT(cutune__measure_log_append(log, &a), 0);
    cutune__measure_log_close(log);
    FILE *f = fopen(path, "a");
    /* Not JSON; another version; a correct result without a time; an
     * unknown outcome; more final-round launches than launches; a
     * negative time; then a line cut off by a killed writer. */
    fputs("not json\n", f);
    fputs("{\"v\":2,\"config\":\"X=2\",\"outcome\":\"correct\","
          "\"grid\":[1,1,1],\"block\":[1,1,1],\"runtimes\":[1.0],"
          "\"time_ms\":1.0}\n",
          f);
    fputs("{\"v\":1,\"config\":\"X=3\",\"outcome\":\"correct\","
          "\"grid\":[1,1,1],\"block\":[1,1,1],\"runtimes\":[]}\n",
          f);
    fputs("{\"v\":1,\"config\":\"X=4\",\"outcome\":\"exploded\","
          "\"grid\":[1,1,1],\"block\":[1,1,1],\"runtimes\":[]}\n",
          f);
    fputs("{\"v\":1,\"config\":\"X=6\",\"outcome\":\"correct\","
          "\"grid\":[1,1,1],\"block\":[1,1,1],\"runtimes\":[1.0],"
          "\"time_ms\":1.0,\"final_runs\":2}\n",
          f);
    fputs("{\"v\":1,\"config\":\"X=7\",\"outcome\":\"correct\","
          "\"grid\":[1,1,1],\"block\":[1,1,1],\"runtimes\":[1.0],"
          "\"time_ms\":-1.0}\n",
          f);
    fputs("{\"v\":1,\"config\":\"X=5\",\"outc", f);
    fclose(f);
    log = cutune__measure_log_open(path, 1, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_count(log), 1);
    CHECK_INT(cutune__measure_log_skipped(log), 7);
    CHECK(cutune__measure_log_find(log, "X=1") != NULL);
    for (int i = 2; i <= 7; i++) {
        char cfg[8];
        snprintf(cfg, sizeof cfg, "X=%d", i);
        CHECK(cutune__measure_log_find(log, cfg) == NULL);
    }
    cutune__measure_log_close(log);
    free(path);
}

static void test_unwritable(void)
{
    char err[256] = "";
    cutune__measure_log *log = cutune__measure_log_open(
        "/proc/cutune-no-such-dir/m.jsonl", 1, err, sizeof err);
    CHECK(log == NULL);
    CHECK_CONTAINS(err, "cannot");
}

static void test_concurrent_appends(void)
{
    char *path = path_of("concurrent.jsonl");
    enum { PROCS = 8, LINES = 200 };
    for (int p = 0; p < PROCS; p++) {
        if (fork() == 0) {
            char err[256];
            cutune__measure_log *log =
                cutune__measure_log_open(path, 0, err, sizeof err);
            /* Long lines (a thousand runtimes) make interleaving likely if
             * a line were written in pieces. */
            double rt[1000];
            for (int i = 0; i < 1000; i++)
                rt[i] = 1.0 + i * 1e-3;
            for (int i = 0; i < LINES; i++) {
                char cfg[32];
                snprintf(cfg, sizeof cfg, "P=%d I=%d", p, i);
                cutune__measured m = sample(cfg, 1.0 + p);
                m.runtimes = rt;
                m.runs = 1000;
                cutune__measure_log_append(log, &m);
            }
            cutune__measure_log_close(log);
            _exit(0);
        }
    }
    for (int p = 0; p < PROCS; p++)
        wait(NULL);
    char err[256];
    cutune__measure_log *log =
        cutune__measure_log_open(path, 1, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_count(log), PROCS * LINES);
    CHECK_INT(cutune__measure_log_skipped(log), 0);
    int found = 0;
    for (int p = 0; p < PROCS; p++)
        for (int i = 0; i < LINES; i++) {
            char cfg[32];
            snprintf(cfg, sizeof cfg, "P=%d I=%d", p, i);
            const cutune__measured *m = cutune__measure_log_find(log, cfg);
            found += m && m->runs == 1000 && m->time_ms == 1.0 + p;
        }
    CHECK_INT(found, PROCS * LINES);
    cutune__measure_log_close(log);
    free(path);
}

/* Lines in the file at `path`. */
static size_t lines_in(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

/* Compaction keeps the last line of each configuration, and only rewrites
 * a log that has doubled since and is mostly superseded lines. */
static void test_compact(void)
{
    char *path = path_of("compact.jsonl");
    char err[256];
    cutune__measure_log *log =
        cutune__measure_log_open(path, 0, err, sizeof err);
    CHECK(log != NULL);
    for (int k = 0; log && k < 30; k++)
        for (int c = 0; c < 10; c++) {
            char cfg[32];
            snprintf(cfg, sizeof cfg, "C=%d", c);
            cutune__measured m = sample(cfg, 100.0 * c + k);
            CHECK_INT(cutune__measure_log_append(log, &m), 0);
        }
    /* A line load() skips (no such outcome) after C=9's last good one,
     * and a line torn by a killed writer, at the end. */
    FILE *f = fopen(path, "a");
    fputs("{\"v\":1,\"config\":\"C=9\",\"outcome\":\"bogus\"}\n", f);
    fputs("{\"v\":1,\"config\":\"C=3\",\"tim", f);
    fclose(f);
    chmod(path, 0600);
    size_t dropped = 99;
    /* Under the size threshold: nothing happens. */
    CHECK_INT(
        cutune__measure_log_compact(path, 1 << 30, &dropped, err, sizeof err),
        0);
    CHECK_INT(dropped, 0);
    CHECK_INT(lines_in(path), 301);
    /* What compactions killed before their rename left: removed once an
     * hour old; one just written (a compaction under way) is not. */
    char stale[2][600], fresh[600];
    snprintf(stale[0], sizeof stale[0], "%s.Ab3dE9", path);
    snprintf(stale[1], sizeof stale[1], "%s.size.Xy12Zq", path);
    snprintf(fresh, sizeof fresh, "%s.Fr35h0", path);
    for (int k = 0; k < 3; k++) {
        const char *name = k < 2 ? stale[k] : fresh;
        FILE *t = fopen(name, "w");
        if (t) {
            fputs("partial\n", t);
            fclose(t);
        }
        if (k < 2) {
            struct utimbuf old = {time(NULL) - 7200, time(NULL) - 7200};
            utime(name, &old);
        }
    }
    CHECK_INT(cutune__measure_log_compact(path, 0, &dropped, err, sizeof err),
              0);
    CHECK(access(stale[0], F_OK) != 0 && access(stale[1], F_OK) != 0);
    CHECK(access(fresh, F_OK) == 0);
    unlink(fresh);
    CHECK_INT(dropped, 292);
    CHECK_INT(lines_in(path), 10);
    /* The rewritten file keeps the old one's mode. */
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    /* The log still open appends to the compacted file. */
    cutune__measured late = sample("C=late", 7.0);
    CHECK_INT(cutune__measure_log_append(log, &late), 0);
    cutune__measure_log_close(log);
    log = cutune__measure_log_open(path, 1, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_count(log), 11);
    CHECK_INT(cutune__measure_log_skipped(log), 0);
    for (int c = 0; log && c < 10; c++) {
        char cfg[32];
        snprintf(cfg, sizeof cfg, "C=%d", c);
        const cutune__measured *m = cutune__measure_log_find(log, cfg);
        CHECK(m && m->time_ms == 100.0 * c + 29 && m->runs == 3);
    }
    CHECK(cutune__measure_log_find(log, "C=late") != NULL);
    cutune__measure_log_close(log);
    /* Not twice its compacted size yet: left alone. */
    CHECK_INT(cutune__measure_log_compact(path, 0, &dropped, err, sizeof err),
              0);
    CHECK_INT(dropped, 0);
    CHECK_INT(lines_in(path), 11);
    free(path);

    /* Distinct configurations only: nothing to drop, no rewrite. */
    path = path_of("distinct.jsonl");
    log = cutune__measure_log_open(path, 0, err, sizeof err);
    for (int c = 0; log && c < 50; c++) {
        char cfg[32];
        snprintf(cfg, sizeof cfg, "D=%d", c);
        cutune__measured m = sample(cfg, 1.0 + c);
        cutune__measure_log_append(log, &m);
    }
    cutune__measure_log_close(log);
    CHECK_INT(cutune__measure_log_compact(path, 0, &dropped, err, sizeof err),
              0);
    CHECK_INT(dropped, 0);
    CHECK_INT(lines_in(path), 50);
    free(path);
}

/* Compactions running while other processes append lose no line: every
 * configuration's last line survives. */
static void test_compact_concurrent(void)
{
    char *path = path_of("compact-concurrent.jsonl");
    enum { PROCS = 4, LINES = 400, CONFIGS = 20 };
    for (int p = 0; p < PROCS; p++) {
        if (fork() == 0) {
            char err[256];
            cutune__measure_log *log =
                cutune__measure_log_open(path, 0, err, sizeof err);
            for (int i = 0; i < LINES; i++) {
                char cfg[32];
                snprintf(cfg, sizeof cfg, "P=%d C=%d", p, i % CONFIGS);
                cutune__measured m = sample(cfg, (double)i);
                cutune__measure_log_append(log, &m);
            }
            cutune__measure_log_close(log);
            _exit(0);
        }
    }
    int compactions = 0, running = PROCS;
    char err[256];
    while (running > 0) {
        size_t dropped = 0;
        CHECK_INT(
            cutune__measure_log_compact(path, 0, &dropped, err, sizeof err),
            0);
        compactions += dropped > 0;
        if (waitpid(-1, NULL, WNOHANG) > 0)
            running--;
    }
    CHECK(compactions >= 1);
    cutune__measure_log *log =
        cutune__measure_log_open(path, 1, err, sizeof err);
    CHECK(log != NULL);
    CHECK_INT(cutune__measure_log_skipped(log), 0);
    int last = 0;
    for (int p = 0; p < PROCS; p++)
        for (int c = 0; c < CONFIGS; c++) {
            char cfg[32];
            snprintf(cfg, sizeof cfg, "P=%d C=%d", p, c);
            const cutune__measured *m = cutune__measure_log_find(log, cfg);
            last += m && m->time_ms == (double)(LINES - CONFIGS + c);
        }
    CHECK_INT(last, PROCS * CONFIGS);
    printf("compact-concurrent: %d compactions beside %d writers\n",
           compactions, PROCS);
    cutune__measure_log_close(log);
    free(path);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_roundtrip();
    test_bad_lines();
    test_unwritable();
    test_concurrent_appends();
    test_compact();
    test_compact_concurrent();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_finish();
}
