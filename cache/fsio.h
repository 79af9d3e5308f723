/* The plumbing cache/ and tuner/ share: FNV-1a hashes, making
 * directories, replacing a file atomically, and writing an output. No CUDA, no
 * jansson, no cutune types, so it sits at the bottom: the one internal header
 * of cache/ that tuner/ includes (docs/architecture.md). Every function is
 * thread-safe; none keeps state between calls. */
#ifndef CUTUNE_CACHE_FSIO_H
#define CUTUNE_CACHE_FSIO_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 32- and 64-bit. Their values are part of what is on disk (the
 * per-device cache's file names, binary cache entries, measurement logs'
 * keys, source hashes), so they never change. Not for security. */
uint32_t cutune__fnv1a32(const void *data, size_t len);
uint64_t cutune__fnv1a64(const void *data, size_t len);
uint64_t cutune__fnv1a64_continue(uint64_t hash, const void *data, size_t len);

/* mkdir -p with mode 0755 (less the umask): creates `path` and its missing
 * parents. A parent that exists is no obstacle even where mkdir() fails on
 * it for another reason (EACCES in a directory this user may not write).
 * Returns 0, or -1 with errno set (ENOMEM when memory ran out); then,
 * when `failed` is not NULL, *failed is the length of the prefix of `path`
 * that could not be made (all of it when it exists but is no directory, or
 * when memory ran out). */
int cutune__make_dirs(const char *path, size_t *failed);

/* fsync() on a directory, which makes the names of files created or
 * renamed in it durable. Best effort: some file systems refuse it. */
void cutune__sync_dir(const char *dir);

/* A file written under a temporary name beside its final path and renamed
 * over it, so that readers see the old file or the new one whole, never a
 * part. Failures are sticky: after one, writes do nothing and commit
 * removes the temporary file and fails. */
typedef struct cutune__atomic_file {
    const char *tmp;    /* the temporary file's path, borrowed */
    int fd;             /* -1 once closed */
    int err;            /* errno of the first failure; 0 while none */
    const char *failed; /* the step that failed: "create", "write",
                           "sync", "close" (of `tmp`) or "rename into"
                           (the final path); NULL while none */
} cutune__atomic_file;

/* Creates the temporary file `tmp`, which the caller owns and keeps until
 * the commit or abort: a template ending in XXXXXX, rewritten in place to
 * a name that did not exist. The file is created O_CREAT|O_EXCL|
 * O_NOFOLLOW, so a name planted in the directory (a symbolic link to a
 * file of someone else's) is never followed, only passed over. It gets
 * `mode` less the umask, or 0600 with `mode` 0. Returns 0, or -1 with
 * f->failed, f->err and errno set. */
int cutune__atomic_file_open(cutune__atomic_file *f, char *tmp, int mode);

/* Writes all `len` bytes (through short writes and EINTR). 0, or -1 with
 * errno set (after an earlier failure, -1 and nothing written). */
int cutune__atomic_file_write(cutune__atomic_file *f, const void *data,
                              size_t len);

/* With `sync`, fsyncs the file first; closes it and renames it to `path`
 * (in the same directory, where rename() is atomic). 0, or -1 with the
 * temporary file removed, f->failed set and errno and f->err the
 * failure's. Syncing the directory afterwards, where the new name must be
 * durable too, is the caller's (cutune__sync_dir). */
int cutune__atomic_file_commit(cutune__atomic_file *f, const char *path,
                               int sync);

/* Closes and removes the temporary file without renaming it; errno stays
 * as it was (the caller's reason to abort). */
void cutune__atomic_file_abort(cutune__atomic_file *f);

/* Outputs: how every file a user names is written (a T4 file, an HTML
 * report, an export, a merged cache), and every file of the cache that is
 * replaced whole.
 *
 * - "-" is standard output.
 * - A symbolic link is written through: the final target of its chain of
 *   links is created or replaced, and the link stays a link.
 * - A FIFO or a character device (/dev/null, a terminal) is opened and
 *   written into, never replaced; opening a FIFO waits for its reader.
 *   Directories, sockets and block devices are refused.
 * - Anything else, a regular file or no file yet, is written to a new file
 *   beside its target (cutune__atomic_file_open: O_EXCL|O_NOFOLLOW), which
 *   is fsynced and renamed over the target, and the directory is fsynced:
 *   readers see the old file or the new one whole. A replaced file's
 *   permission bits are kept; a new file gets 0644 less the umask.
 *
 * Failures say "cannot write PATH: REASON" in `why` (`size` bytes, may be
 * NULL): "is a directory", "no such directory DIR", "cannot create files
 * in DIR (Permission denied)", ... */
typedef enum cutune__output_kind {
    CUTUNE__OUTPUT_STDOUT = 1, /* "-" */
    CUTUNE__OUTPUT_REPLACE,    /* written aside, renamed over the target */
    CUTUNE__OUTPUT_STREAM      /* a FIFO or character device, written into */
} cutune__output_kind;

/* Checks, writing nothing, that `path` can be written as above; what a
 * command calls before it starts work that a bad path would waste.
 * Returns the kind, or -1 with errno set and `why` filled. */
int cutune__output_check(const char *path, char *why, size_t size);

/* Writes the `len` bytes of `data` to `path` as above. 0, or -1 with
 * errno set and `why` filled. */
int cutune__output_write(const char *path, const void *data, size_t len,
                         char *why, size_t size);

/* For a read-modify-replace of `path` (a merge into one of its inputs):
 * opens the regular file `path` names and takes a shared flock() on it,
 * which keeps the cache's appends (they take an exclusive one) out until
 * cutune__output_unlock, after the rename. An append that waited sees the
 * name point to the new file and appends there (store_io.c). Returns the
 * descriptor, or -1 when there is no such regular file (nothing to keep
 * out). */
int cutune__output_lock(const char *path);
void cutune__output_unlock(int fd);

#endif
