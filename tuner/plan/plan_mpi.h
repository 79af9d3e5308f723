/* What the two sides of a plan over MPI share (plan_mpi.c: the entry
 * point and the ranks that tune; plan_mpi_dispatch.c: rank 0): the
 * messages, and receiving them by polling. Built only with MPI. */
#ifndef CUTUNE_PLAN_MPI_H
#define CUTUNE_PLAN_MPI_H

#include <stdint.h>

#include "plan_run.h"

enum {
    TAG_REQUEST = 1, /* rank -> 0: give me a task */
    TAG_TASK,        /* 0 -> rank: task index (long long) */
    TAG_STOP,        /* 0 -> rank: nothing left, or you were timed out */
    TAG_CHECK,       /* rank -> 0: {"task", "device"}: is it cached? */
    TAG_GO,          /* 0 -> rank: tune it */
    TAG_SKIP,        /* 0 -> rank: cached, take the next */
    TAG_RESULT,      /* rank -> 0: {"task", "record"} */
    TAG_FAIL,        /* rank -> 0: {"task", "status", "message"} */
    TAG_HELLO,       /* rank -> 0: {"hash", "tasks", "beats"}: its plan */
    TAG_VERDICT,     /* 0 -> rank: {"ok"}: do the plans agree? */
    TAG_ALIVE        /* rank -> 0: still tuning */
};

/* Without a word for this long, rank 0 takes a rank for stopped. */
#define CUTUNE__RANK_TIMEOUT_DEFAULT 600.0

int cutune__mpi_send_json(json_t *j, int dest, int tag);
int cutune__mpi_send_empty(int dest, int tag);

/* Receives the next message from `source` (MPI_ANY_SOURCE) whatever its
 * tag, polling, until `deadline` (cutune__plan_now()'s clock; 0: none):
 * *got 0 when it passed first. A text message is parsed into *json
 * (NULL for an empty one or one that is not JSON); a TASK's index goes
 * to *number. Returns an MPI error code. */
int cutune__mpi_recv(int source, double deadline, int *got, int *from,
                     int *tag, json_t **json, long long *number);

/* Rank 0: dispatches to the other `ranks` - 1 ranks and, when
 * `tune_here`, tunes in a thread of its own. */
cutune_status cutune__plan_mpi_rank0(cutune_plan *plan,
                                     const cutune_plan_backend *backend,
                                     const cutune_plan_run_options *options,
                                     int ranks, int tune_here,
                                     cutune_plan_report *report);

#endif
