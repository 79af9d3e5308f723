/* cache/fsio.c: hash values pinned (they are part of on-disk names and
 * keys), mkdir -p, and atomic replacement with its failures. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fsio.h"

static char root[256];

static char *path_in(const char *name)
{
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", root, name);
    return p;
}

static size_t entries(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return f ? buf : NULL;
}

static void test_hashes(void)
{
    /* The published FNV-1a test vectors. */
    CHECK(cutune__fnv1a32("", 0) == 0x811c9dc5u);
    CHECK(cutune__fnv1a32("a", 1) == 0xe40c292cu);
    CHECK(cutune__fnv1a32("foobar", 6) == 0xbf9cf968u);
    CHECK(cutune__fnv1a64("", 0) == 0xcbf29ce484222325ULL);
    CHECK(cutune__fnv1a64("a", 1) == 0xaf63dc4c8601ec8cULL);
    CHECK(cutune__fnv1a64("foobar", 6) == 0x85944171f73967e8ULL);
    uint64_t h = cutune__fnv1a64("foo", 3);
    CHECK(cutune__fnv1a64_continue(h, "bar", 3) ==
          cutune__fnv1a64("foobar", 6));
}

static void test_make_dirs(void)
{
    size_t failed = 99;
    CHECK_INT(cutune__make_dirs(path_in("a/b//c/"), &failed), 0);
    struct stat st;
    CHECK(stat(path_in("a/b/c"), &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_INT(cutune__make_dirs(path_in("a/b/c"), NULL), 0);

    FILE *f = fopen(path_in("file"), "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    const char *under = path_in("file/x/y");
    CHECK_INT(cutune__make_dirs(under, &failed), -1);
    CHECK_INT(errno, ENOTDIR);
    CHECK_INT(failed, strlen(root) + strlen("/file/x"));
    CHECK_INT(cutune__make_dirs(path_in("file"), &failed), -1);
    CHECK_INT(errno, ENOTDIR);
    CHECK_INT(failed, strlen(path_in("file")));
}

static void test_atomic_file(void)
{
    char *dir = path_in("atomic");
    CHECK_INT(cutune__make_dirs(dir, NULL), 0);
    char *target = path_in("atomic/target");

    /* A mkstemp() template: a unique name, mode 0600. */
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/tmp-XXXXXX", dir);
    cutune__atomic_file f;
    CHECK_INT(cutune__atomic_file_open(&f, tmp, 0), 0);
    CHECK(strstr(tmp, "XXXXXX") == NULL);
    CHECK_INT(cutune__atomic_file_write(&f, "one ", 4), 0);
    CHECK_INT(cutune__atomic_file_write(&f, "two\n", 4), 0);
    CHECK_INT(cutune__atomic_file_commit(&f, target, 1), 0);
    CHECK_STR(slurp(target), "one two\n");
    struct stat st;
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK_INT(entries(dir), 1);

    /* A name of the caller's, replacing the file with the new text. */
    snprintf(tmp, sizeof tmp, "%s/.target.tmp", dir);
    mode_t old = umask(022);
    CHECK_INT(cutune__atomic_file_open(&f, tmp, 0666), 0);
    umask(old);
    CHECK_INT(cutune__atomic_file_write(&f, "three\n", 6), 0);
    CHECK_INT(cutune__atomic_file_commit(&f, target, 0), 0);
    CHECK_STR(slurp(target), "three\n");
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0644);
    CHECK_INT(entries(dir), 1);

    /* Abort: the target as it was, no temporary file, errno kept. */
    snprintf(tmp, sizeof tmp, "%s/tmp-XXXXXX", dir);
    CHECK_INT(cutune__atomic_file_open(&f, tmp, 0), 0);
    CHECK_INT(cutune__atomic_file_write(&f, "four\n", 5), 0);
    errno = EPERM;
    cutune__atomic_file_abort(&f);
    CHECK_INT(errno, EPERM);
    CHECK_STR(slurp(target), "three\n");
    CHECK_INT(entries(dir), 1);

    /* A rename that fails removes the temporary file and says why. */
    snprintf(tmp, sizeof tmp, "%s/tmp-XXXXXX", dir);
    CHECK_INT(cutune__atomic_file_open(&f, tmp, 0), 0);
    CHECK_INT(cutune__atomic_file_write(&f, "five\n", 5), 0);
    CHECK_INT(cutune__atomic_file_commit(&f, path_in("none/target"), 1), -1);
    CHECK_STR(f.failed, "rename into");
    CHECK_INT(f.err, ENOENT);
    CHECK_INT(errno, ENOENT);
    CHECK_INT(entries(dir), 1);

    /* Failing to create: nothing to remove, the step named; failures are
     * sticky. */
    snprintf(tmp, sizeof tmp, "%s/none/tmp-XXXXXX", root);
    CHECK_INT(cutune__atomic_file_open(&f, tmp, 0), -1);
    CHECK_STR(f.failed, "create");
    CHECK_INT(f.err, ENOENT);
    CHECK_INT(cutune__atomic_file_write(&f, "six\n", 4), -1);
    CHECK_INT(cutune__atomic_file_commit(&f, target, 1), -1);
    CHECK_STR(f.failed, "create");
    CHECK_STR(slurp(target), "three\n");
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/cutune-fsio-XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(root)) {
        perror(root);
        return 1;
    }
    test_hashes();
    test_make_dirs();
    test_atomic_file();
    remove_tree(root);
    return check_finish();
}
