/* cache/merge.c: one precedence with lookup (the newer record stays, so a
 * --force re-tune survives a merge), the output written as every output
 * is (a link written through, a FIFO written into, "-" to standard
 * output, a planted temporary name not followed, a bad path refused
 * before anything is read), and a merge into the file a tune appends to
 * losing no record. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

static char root[256];

static char *in_root(const char *name)
{
    size_t n = strlen(root) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", root, name);
    return p;
}

static size_t lines_of(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

static char *text_of(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 1 << 16);
    if (f) {
        size_t n = fread(buf, 1, (1 << 16) - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

/* A record of `size` on the one made-up device, tagged in its config. */
static cutune_status append(cutune_cache *cache, long long size,
                            const char *tag, size_t runs, long long when)
{
    cutune_cache_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device.name, sizeof r.device.name, "GTX Fictional 9000");
    snprintf(r.device.uuid, sizeof r.device.uuid,
             "GPU-12345678-0000-0000-0000-000000000000");
    r.device.cc_major = 9;
    r.device.sm_count = 100;
    cutune_param_value config[2] = {{"block_size_x", "128"}, {"tag", tag}};
    r.problem_name = "scan";
    r.source_hash = "0123456789abcdef";
    r.problem_size = &size;
    r.n_problem_size = 1;
    r.compiler_options = "";
    r.config = config;
    r.n_config = 2;
    r.time_ms = 1.0;
    r.time_min_ms = 0.9;
    r.time_stddev_ms = 0.01;
    r.runs = runs;
    r.baseline = config;
    r.n_baseline = 2;
    r.baseline_ms = 2.0;
    r.strategy = "random";
    r.evaluations = 10;
    r.tune_seconds = 1.0;
    r.timestamp = when;
    return cutune_cache_append(cache, &r);
}

static const char *tag_of(const cutune_cache_record *r)
{
    for (size_t i = 0; r && i < r->n_config; i++)
        if (strcmp(r->config[i].name, "tag") == 0)
            return r->config[i].value;
    return NULL;
}

/* An old record with many runs, then a --force re-tune with fewer: the
 * re-tune is what lookup answers, before and after a merge, whatever the
 * order of the inputs. */
static void test_newer_wins(void)
{
    char *old_dir = in_root("old"), *new_dir = in_root("new");
    char *out = in_root("merged.jsonl");
    cutune_cache *a = NULL, *b = NULL;
    CHECK_INT(cutune_cache_open(old_dir, &a), CUTUNE_OK);
    CHECK_INT(cutune_cache_open(new_dir, &b), CUTUNE_OK);
    CHECK_INT(append(a, 1024, "first-tune", 200, 1000), CUTUNE_OK);
    CHECK_INT(append(b, 1024, "forced", 20, 2000), CUTUNE_OK);
    /* equal timestamps: the one read later */
    CHECK_INT(append(a, 2048, "read-first", 50, 3000), CUTUNE_OK);
    CHECK_INT(append(b, 2048, "read-later", 10, 3000), CUTUNE_OK);

    const char *orders[2][2] = {{old_dir, new_dir}, {new_dir, old_dir}};
    for (int k = 0; k < 2; k++) {
        cutune_cache_merge_stats stats;
        CHECK_INT(cutune_cache_merge(a, orders[k], 2, out, &stats), CUTUNE_OK);
        CHECK_INT(stats.records_written, 2);
        char *text = text_of(out);
        CHECK_CONTAINS(text, "\"forced\"");
        CHECK(!strstr(text, "first-tune"));
        CHECK_CONTAINS(text, k == 0 ? "read-later" : "read-first");
        free(text);
    }

    /* lookup over both caches answers what the merge kept */
    cutune_cache_close(a);
    a = NULL;
    CHECK_INT(cutune_cache_open(root, &a), CUTUNE_OK);
    const char *both[2] = {old_dir, new_dir};
    CHECK_INT(cutune_cache_merge(a, both, 2, out, NULL), CUTUNE_OK);
    cutune_cache *merged = NULL;
    CHECK_INT(cutune_cache_open(root, &merged), CUTUNE_OK);
    long long size = 1024;
    cutune_cache_query q = {.problem_name = "scan",
                            .device_name = "GTX Fictional 9000",
                            .problem_size = &size,
                            .n_problem_size = 1};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(b, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(tag_of(rec), "forced");
    CHECK_INT(cutune_cache_lookup(merged, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(tag_of(rec), "forced");
    cutune_cache_close(merged);
    cutune_cache_close(a);
    cutune_cache_close(b);
    unlink(out);
    free(out);
    free(old_dir);
    free(new_dir);
}

/* The output of a merge goes where fsio.h says, never replacing what is
 * not a regular file. */
static void test_output_paths(void)
{
    char *in = in_root("new");
    const char *inputs[1] = {in};
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(root, &c), CUTUNE_OK);
    char *outs = in_root("outs");
    mkdir(outs, 0755);

    /* a symbolic link: written through, still a link */
    char *real = in_root("outs/real.jsonl"), *link = in_root("outs/link");
    CHECK_INT(symlink("real.jsonl", link), 0);
    CHECK_INT(cutune_cache_merge(c, inputs, 1, link, NULL), CUTUNE_OK);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK_INT(lines_of(real), 2);

    /* a FIFO: written into, still a FIFO */
    char *fifo = in_root("outs/fifo"), *copy = in_root("fifo-copy");
    CHECK_INT(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char buf[4096];
        int from = open(fifo, O_RDONLY);
        int to = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ssize_t n;
        while ((n = read(from, buf, sizeof buf)) > 0)
            if (write(to, buf, (size_t)n) != n)
                break;
        _exit(0);
    }
    CHECK_INT(cutune_cache_merge(c, inputs, 1, fifo, NULL), CUTUNE_OK);
    waitpid(pid, NULL, 0);
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK_INT(lines_of(copy), 2);

    /* "-": standard output, no file named "-" */
    char *captured = in_root("stdout");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    char *cwd = getcwd(NULL, 0);
    CHECK_INT(chdir(outs), 0);
    CHECK_INT(cutune_cache_merge(c, inputs, 1, "-", NULL), CUTUNE_OK);
    CHECK(access("-", F_OK) != 0);
    CHECK_INT(chdir(cwd), 0);
    free(cwd);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    CHECK_INT(lines_of(captured), 2);

    /* the temporary name the merge used to take, planted as a link to a
     * file of someone else's: not followed */
    char *victim = in_root("victim"), planted[512];
    FILE *f = fopen(victim, "w");
    fputs("not cutune's\n", f);
    fclose(f);
    snprintf(planted, sizeof planted, "%s/outs/.plain.jsonl.tmp-%ld", root,
             (long)getpid());
    CHECK_INT(symlink(victim, planted), 0);
    char *plain = in_root("outs/plain.jsonl");
    CHECK_INT(cutune_cache_merge(c, inputs, 1, plain, NULL), CUTUNE_OK);
    char *text = text_of(victim);
    CHECK_STR(text, "not cutune's\n");
    free(text);
    CHECK(lstat(plain, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_INT(lines_of(plain), 2);

    /* paths that cannot be written: one message naming the path */
    CHECK_INT(cutune_cache_merge(c, inputs, 1, outs, NULL), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_cache_errmsg(c), "is a directory");
    char *missing = in_root("none/merged.jsonl");
    CHECK_INT(cutune_cache_merge(c, inputs, 1, missing, NULL), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_cache_errmsg(c), missing);
    CHECK_CONTAINS(cutune_cache_errmsg(c), "no such directory");

    cutune_cache_close(c);
    free(in);
    free(outs);
    free(real);
    free(link);
    free(fifo);
    free(copy);
    free(captured);
    free(victim);
    free(plain);
    free(missing);
}

/* `merge F -o F` again and again while three processes append to F: every
 * appended record is in F at the end. */
static void test_merge_in_place_while_appending(void)
{
    enum { WRITERS = 3, EACH = 60 };
    char *dir = in_root("live");
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    CHECK_INT(append(c, 1, "seed", 10, 1000), CUTUNE_OK);
    cutune_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "GTX Fictional 9000");
    snprintf(d.uuid, sizeof d.uuid,
             "GPU-12345678-0000-0000-0000-000000000000");
    char name[CUTUNE__CACHE_FILE_NAME_MAX], path[1024];
    cutune__cache_file_name(&d, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_INT(lines_of(path), 1);

    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            cutune_cache *mine = NULL;
            int bad = cutune_cache_open(dir, &mine) != CUTUNE_OK;
            for (int i = 0; i < EACH && !bad; i++)
                bad = append(mine, 100 + w * EACH + i, "live", 10, 2000) !=
                      CUTUNE_OK;
            cutune_cache_close(mine);
            _exit(bad);
        }
    }
    const char *self[1] = {path};
    int running = WRITERS, failed = 0, merges = 0;
    while (running > 0) {
        failed |= cutune_cache_merge(c, self, 1, path, NULL) != CUTUNE_OK;
        merges++;
        int status;
        pid_t done;
        while ((done = waitpid(-1, &status, WNOHANG)) > 0) {
            running--;
            failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        }
    }
    CHECK_INT(failed, 0);
    CHECK(merges > 1);
    CHECK_INT(lines_of(path), 1 + WRITERS * EACH);
    cutune_cache_close(c);
    free(dir);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/cutune-merge-XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(root)) {
        perror(root);
        return 1;
    }
    test_newer_wins();
    test_output_paths();
    test_merge_in_place_while_appending();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return check_finish();
}
