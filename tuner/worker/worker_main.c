#define _POSIX_C_SOURCE 200809L

/* cutune-worker: started by the tuning process, never by hand. */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "protocol.h"
#include "worker.h"

int main(void)
{
    struct stat st;
    if (fstat(CUTUNE__WORKER_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "cutune-worker: the GPU worker of cutune; it is "
                        "started by `cutune`, not by hand\n");
        return 2;
    }
    return cutune__worker_main(CUTUNE__WORKER_FD);
}
