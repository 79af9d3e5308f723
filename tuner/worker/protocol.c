#define _GNU_SOURCE

#include "protocol.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "util.h"

int cutune__msg_send(int fd, uint32_t type, const void *a, size_t alen,
                     const void *b, size_t blen)
{
    cutune__msg_header h = {CUTUNE__PROTO_MAGIC, CUTUNE__PROTO_VERSION, type,
                            0, (uint64_t)alen + blen};
    struct iovec iov[3] = {
        {&h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = iov;
    msg.msg_iovlen = 3;
    for (;;) {
        /* Skip what is fully sent, empty parts included. */
        while (msg.msg_iovlen > 0 && msg.msg_iov[0].iov_len == 0) {
            msg.msg_iov++;
            msg.msg_iovlen--;
        }
        if (msg.msg_iovlen == 0)
            break;
        /* MSG_NOSIGNAL: a dead peer is an error to report, not a signal
         * that kills the tuning process. */
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (size_t k = 0; n > 0 && k < msg.msg_iovlen; k++) {
            size_t take = (size_t)n < msg.msg_iov[k].iov_len
                              ? (size_t)n
                              : msg.msg_iov[k].iov_len;
            msg.msg_iov[k].iov_base = (char *)msg.msg_iov[k].iov_base + take;
            msg.msg_iov[k].iov_len -= take;
            n -= (ssize_t)take;
        }
    }
    return 0;
}

static int read_full(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len > 0) {
        if (deadline >= 0) {
            double left = deadline - cutune__now();
            if (left <= 0)
                return -2;
            struct pollfd pfd = {fd, POLLIN, 0};
            int r = poll(&pfd, 1, (int)(left * 1000.0) + 1);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return -1;
            if (r == 0)
                return -2;
        }
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int cutune__msg_recv(int fd, uint32_t *type, void **payload, size_t *size,
                     double timeout_s)
{
    double deadline = timeout_s < 0 ? -1.0 : cutune__now() + timeout_s;
    cutune__msg_header h;
    *payload = NULL;
    *size = 0;
    int rc = read_full(fd, &h, sizeof h, deadline);
    if (rc != 0)
        return rc;
    if (h.magic != CUTUNE__PROTO_MAGIC || h.version != CUTUNE__PROTO_VERSION ||
        h.size > CUTUNE__PROTO_MAX_PAYLOAD)
        return -1;
    void *buf = malloc(h.size ? h.size : 1);
    if (!buf)
        return -3;
    rc = read_full(fd, buf, h.size, deadline);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *type = h.type;
    *payload = buf;
    *size = h.size;
    return 0;
}
