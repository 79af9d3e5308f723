/* cache/fsio.c: hash values pinned (they are part of on-disk names and
 * keys), mkdir -p, atomic replacement with its failures, and the one way
 * an output is written: "-", symbolic links, FIFOs, device nodes, planted
 * temporary names, and paths that cannot be written. */
#define _DEFAULT_SOURCE /* flock */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

    /* A template: a unique name, mode 0600. */
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

    /* A mode of the caller's, less the umask; the file replaced. */
    snprintf(tmp, sizeof tmp, "%s/.target.XXXXXX", dir);
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

/* Temporary names are templates, never a name of the caller's that a
 * planted symbolic link could stand at: a plain name is refused, and the
 * file it would have followed stays as it was. */
static void test_atomic_planted(void)
{
    char *victim = strdup(path_in("atomic/victim"));
    FILE *f = fopen(victim, "w");
    fputs("mine\n", f);
    fclose(f);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/atomic/.target.tmp", root);
    CHECK_INT(symlink(victim, tmp), 0);
    cutune__atomic_file a;
    CHECK_INT(cutune__atomic_file_open(&a, tmp, 0644), -1);
    CHECK_INT(a.err, EINVAL);
    CHECK_STR(slurp(victim), "mine\n");
    unlink(tmp);
    unlink(victim);
    free(victim);
}

/* Reads what a child process writes to the FIFO `path`. */
static pid_t fifo_reader(const char *path, const char *copy)
{
    pid_t pid = fork();
    if (pid == 0) {
        char buf[256];
        int in = open(path, O_RDONLY);
        int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                break;
        _exit(0);
    }
    return pid;
}

static void test_output(void)
{
    char *dir = strdup(path_in("out"));
    CHECK_INT(cutune__make_dirs(dir, NULL), 0);
    char why[1024];
    struct stat st;

    /* A new file, then the same file replaced: no temporary file left. */
    char *file = path_in("out/a.txt");
    CHECK_INT(cutune__output_check(file, why, sizeof why),
              CUTUNE__OUTPUT_REPLACE);
    CHECK_INT(cutune__output_write(file, "one\n", 4, why, sizeof why), 0);
    CHECK_STR(slurp(file), "one\n");
    chmod(file, 0640);
    CHECK_INT(cutune__output_write(file, "two\n", 4, why, sizeof why), 0);
    CHECK_STR(slurp(file), "two\n");
    CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK_INT(entries(dir), 1);

    /* A symbolic link is written through; it stays a link. A link to
     * nothing creates its target. */
    char *link = path_in("out/link");
    CHECK_INT(symlink("a.txt", link), 0);
    CHECK_INT(cutune__output_write(link, "three\n", 6, why, sizeof why), 0);
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK_STR(slurp(file), "three\n");
    char *dangling = path_in("out/dangling");
    CHECK_INT(symlink("made.txt", dangling), 0);
    CHECK_INT(cutune__output_write(dangling, "four\n", 5, why, sizeof why), 0);
    CHECK(lstat(dangling, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK_STR(slurp(path_in("out/made.txt")), "four\n");
    char *loop = path_in("out/loop");
    CHECK_INT(symlink("loop", loop), 0);
    CHECK_INT(cutune__output_check(loop, why, sizeof why), -1);
    CHECK_CONTAINS(why, "loop");

    /* A FIFO is written into, not replaced. */
    char *fifo = path_in("out/fifo");
    char *copy = path_in("fifo-copy");
    CHECK_INT(mkfifo(fifo, 0600), 0);
    CHECK_INT(cutune__output_check(fifo, why, sizeof why),
              CUTUNE__OUTPUT_STREAM);
    pid_t pid = fifo_reader(fifo, copy);
    CHECK_INT(cutune__output_write(fifo, "five\n", 5, why, sizeof why), 0);
    waitpid(pid, NULL, 0);
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK_STR(slurp(copy), "five\n");

    /* A device node is written into: /dev/null stays /dev/null. */
    CHECK_INT(cutune__output_check("/dev/null", why, sizeof why),
              CUTUNE__OUTPUT_STREAM);
    CHECK_INT(cutune__output_write("/dev/null", "x", 1, why, sizeof why), 0);
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));

    /* "-" is standard output. */
    char *captured = path_in("stdout");
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    CHECK_INT(cutune__output_write("-", "six\n", 4, why, sizeof why), 0);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    CHECK_STR(slurp(captured), "six\n");
    CHECK(access("-", F_OK) != 0);

    /* Paths that cannot be written: one message naming the path. */
    CHECK_INT(cutune__output_check(dir, why, sizeof why), -1);
    CHECK_CONTAINS(why, "is a directory");
    CHECK_CONTAINS(why, dir);
    char *missing = path_in("none/x.h");
    CHECK_INT(cutune__output_write(missing, "x", 1, why, sizeof why), -1);
    CHECK_INT(errno, ENOENT);
    CHECK_CONTAINS(why, "no such directory");
    CHECK_CONTAINS(why, "none/x.h");
    CHECK_INT(cutune__output_check("", why, sizeof why), -1);
    CHECK_INT(cutune__output_check(path_in("out/a.txt/x"), why, sizeof why),
              -1);
    if (geteuid() != 0) {
        chmod(dir, 0555);
        CHECK_INT(cutune__output_check(path_in("out/new"), why, sizeof why),
                  -1);
        CHECK_CONTAINS(why, "cannot create files in");
        chmod(dir, 0755);
    }
    CHECK_INT(entries(dir), 6);
    free(dir);
}

/* The lock a merge holds keeps an exclusive lock out, and a shared one
 * (a reader's) in. */
static void test_output_lock(void)
{
    char *file = path_in("out/a.txt");
    int fd = cutune__output_lock(file);
    CHECK(fd >= 0);
    int other = open(file, O_RDONLY);
    CHECK(flock(other, LOCK_EX | LOCK_NB) != 0);
    CHECK(flock(other, LOCK_SH | LOCK_NB) == 0);
    close(other);
    cutune__output_unlock(fd);
    CHECK_INT(cutune__output_lock(path_in("out/none")), -1);
    CHECK_INT(cutune__output_lock("-"), -1);
    CHECK_INT(cutune__output_lock(path_in("out/fifo")), -1);
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
    test_atomic_planted();
    test_output();
    test_output_lock();
    remove_tree(root);
    return check_finish();
}
