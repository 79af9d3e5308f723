/* What the files of the per-device cache share and the rest of cache/
 * does not see (store.h has what it does): the handle, a decoded record,
 * and the helpers one step of the cache lends another. The format itself
 * is described at the top of store.c. Included first, since it sets the
 * feature macros. */
#ifndef CUTUNE_CACHE_STORE_INTERNAL_H
#define CUTUNE_CACHE_STORE_INTERNAL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* flock() is BSD, not POSIX */
#endif

#include "fsio.h"
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>

#if defined(__GNUC__)
#define CACHE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CACHE_PRINTF(f, a)
#endif

/* The file-name part taken from the device name; keeps names well under
 * NAME_MAX whatever the driver reports. */
#define NAME_PART_MAX 64

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the timestamps that fit
 * the four-digit year of the format. */
#define TIMESTAMP_MIN (-62167219200LL)
#define TIMESTAMP_MAX 253402300799LL

/* A decoded line. The record's strings point into `root`, its arrays into
 * the three allocations, so moving the struct moves the whole record. */
typedef struct cache_entry {
    json_t *root;
    cutune_cache_record record;
    long long *problem_size;
    cutune_param_value *config;
    cutune_param_value *baseline;
} cache_entry;

struct cutune_cache {
    char *dir;               /* NULL only when open failed */
    size_t skipped_lines;    /* by the most recent scan */
    size_t version_skipped;  /* of those, records of another format version */
    long long other_version; /* the highest such version */
    cache_entry found;       /* what the last lookup returned */
    char errmsg[4352];       /* room for a PATH_MAX path and a reason */
    char warning[1024];
    char first_skip[512];       /* "PATH:LINE: why" of the first line skipped
                                   for a reason other than its version */
    size_t refused;             /* of the skipped lines, records the query's
                                   accept() refused */
    size_t unreadable;          /* files of a scanned directory not read */
    char first_unreadable[512]; /* "PATH: why" of the first */
    struct store_memo *memo;    /* the records kept in memory
                                   (cutune_cache_preload); NULL: none */
};

/* Where a read of a file stopped: the byte after the last line read and
 * that line's number. */
typedef struct cutune__scan_pos {
    off_t offset;
    size_t line;
} cutune__scan_pos;

/* Outcome of decoding one line. */
enum { DECODE_OK, DECODE_INVALID, DECODE_NO_MEMORY };

/* Called for each valid record during a scan; it may take the entry by
 * copying it and zeroing *entry. Nonzero stops the scan. */
typedef int (*entry_visit_fn)(void *user, cache_entry *entry, const char *path,
                              size_t line);

/* Functions one file lends the others, by the file that defines them;
 * each is described at its definition. */

/* store.c */
cutune_status cutune__store_fail_memory(cutune_cache *cache);
/* What every call that writes or keeps the cache starts with: a handle
 * that open left with a directory, and no message from an earlier call.
 * CUTUNE_OK, or the status with the handle's message set. */
cutune_status cutune__cache_start(cutune_cache *cache);
const char *cutune__store_errno_text(int err, char *buf, size_t size);

/* store_fields.c */
int cutune__store_is_ascii_alnum(unsigned char c);
int cutune__store_is_hex(unsigned char c);
unsigned char cutune__store_ascii_lower(unsigned char c);
int cutune__store_utf8_valid(const char *s);
int cutune__store_fits(const char *field, size_t size);
char *cutune__store_path_join(const char *dir, const char *name);
void cutune__store_format_timestamp(long long ts, char *buf, size_t size);
int cutune__store_parse_timestamp(const char *s, long long *out);
int cutune__store_parse_cc(const char *s, int *major, int *minor);

/* store_io.c */
cutune_status cutune__store_make_dir(cutune_cache *cache, const char *dir);
cutune_status cutune__store_write_line(cutune_cache *cache, const char *path,
                                       const char *line, size_t len);

/* store_encode.c */
cutune_status cutune__store_check_record(cutune_cache *cache,
                                         const cutune_cache_record *r);
cutune_status cutune__store_encode_record(cutune_cache *cache,
                                          const cutune_cache_record *r,
                                          char **line, size_t *len);

/* store_decode.c */
void cutune__store_entry_free(cache_entry *e);
int cutune__store_decode_entry(json_t *root, cache_entry *e);

/* store_scan.c */
void cutune__store_note_line(cutune_cache *cache, const char *path,
                             size_t line, const char *why);
cutune_status cutune__store_scan_dir(cutune_cache *cache, entry_visit_fn visit,
                                     void *user, int *missing);
/* Which records a scan may pass over unvisited: those of other problems
 * than `problem` (NULL: none), and those keep() refuses (NULL: none).
 * Only a cache kept in memory passes them over; it is what makes its
 * lookups cheap. */
typedef struct cutune__scan_filter {
    const char *problem;
    int (*keep)(const void *keep_user, const cutune_cache_record *record);
    const void *keep_user;
} cutune__scan_filter;

/* cutune__store_scan_dir with a filter (NULL: none). */
cutune_status cutune__store_scan_filtered(cutune_cache *cache,
                                          const cutune__scan_filter *filter,
                                          entry_visit_fn visit, void *user,
                                          int *missing);
int cutune__store_file_readable(cutune_cache *cache, const char *path);
cutune_status cutune__store_scan_file(cutune_cache *cache, const char *path,
                                      entry_visit_fn visit, void *user,
                                      int *stop, cutune__scan_pos *pos);
cutune_status cutune__store_list_dir(cutune_cache *cache, const char *dirpath,
                                     char ***names, size_t *n_names,
                                     int *missing);
void cutune__store_free_names(char **names, size_t count);

/* store_memo.c */
cutune_status cutune__store_memo_scan(cutune_cache *cache,
                                      const cutune__scan_filter *filter,
                                      entry_visit_fn visit, void *user,
                                      int *missing);
void cutune__store_memo_free(struct store_memo *memo);

#endif
