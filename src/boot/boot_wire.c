/* tcp rendezvous: address parsing, framing, listen and connect. */
#include "boot/boot_wire.h"

#include "core/clock.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static const char ADDRESS_ACCEPTED[] = "HOST:PORT or [IPV6]:PORT with PORT in [1, 65535]";

locus_status_t wire_parse_address(const char *text, bool allow_zero, char *host, size_t host_len,
                                  char *port, size_t port_len)
{
    const char *h = text, *colon;
    size_t hl;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            goto bad;
        h = text + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            goto bad;
        hl = (size_t)(colon - text);
        if (memchr(text, ':', hl)) /* an unbracketed IPv6 address */
            goto bad;
    }
    const char *p = colon + 1;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (hl == 0 || hl >= host_len || !*p || *end || errno || v < (allow_zero ? 0 : 1) ||
        v > 65535 || strlen(p) >= port_len)
        goto bad;
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, port_len, "%ld", v);
    return LOCUS_OK;
bad:
    return lc_err(LOCUS_ERR_INVALID, "address '%s': expected %s", text, ADDRESS_ACCEPTED);
}

/* Wait until fd can take more (or has data), at most until deadline. */
static bool wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = lc_now_ns();
        if (now >= deadline) {
            errno = ETIMEDOUT;
            return false;
        }
        struct pollfd p = {fd, events, 0};
        int ms = (int)((deadline - now) / 1000000 + 1);
        int r = poll(&p, 1, ms);
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
}

bool wire_send(int fd, uint32_t type, uint32_t arg, const void *payload, size_t len,
               double timeout_s)
{
    wire_hdr_t h = {type, arg, len};
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)payload, len}};
    struct msghdr m = {0};
    m.msg_iov = iov;
    m.msg_iovlen = len ? 2 : 1;
    uint64_t deadline = lc_now_ns() + (uint64_t)(timeout_s * 1e9);
    while (m.msg_iovlen) {
        ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLOUT, deadline))
                continue;
            return false;
        }
        while (m.msg_iovlen && (size_t)n >= m.msg_iov[0].iov_len) {
            n -= (ssize_t)m.msg_iov[0].iov_len;
            m.msg_iov++;
            m.msg_iovlen--;
        }
        if (m.msg_iovlen) {
            m.msg_iov[0].iov_base = (char *)m.msg_iov[0].iov_base + n;
            m.msg_iov[0].iov_len -= (size_t)n;
        }
    }
    return true;
}

bool wire_read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ECONNRESET;
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static struct addrinfo *resolve(const char *host, const char *port, bool passive, int *gai)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    *gai = getaddrinfo(host, port, &hints, &res);
    return *gai ? NULL : res;
}

static int bound_port_of(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl))
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

locus_status_t wire_listen(const char *host, const char *port, int *fd_out, int *bound_port)
{
    int gai;
    struct addrinfo *res = resolve(host, port, true, &gai);
    if (!res)
        return lc_err(LOCUS_ERR_INVALID, "cannot resolve '%s': %s", host, gai_strerror(gai));
    int err = 0, fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 4096)) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return lc_err_errno(LOCUS_ERR_SYSTEM, err, "cannot listen on %s:%s", host, port);
    *fd_out = fd;
    *bound_port = bound_port_of(fd);
    return LOCUS_OK;
}

/* One non-blocking connect to one address, bounded by deadline. */
static int connect_one(const struct addrinfo *a, uint64_t deadline, int *err)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
        *err = errno;
        close(fd);
        return -1;
    }
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (!wait_fd(fd, POLLOUT, deadline) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) ||
        soerr) {
        *err = soerr ? soerr : errno;
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int wire_connect(const char *host, const char *port, double timeout_s, int *err)
{
    int gai;
    struct addrinfo *res = resolve(host, port, false, &gai);
    if (!res) {
        *err = EHOSTUNREACH;
        return -1;
    }
    uint64_t deadline = lc_now_ns() + (uint64_t)(timeout_s * 1e9);
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next)
        fd = connect_one(a, deadline, err);
    freeaddrinfo(res);
    return fd;
}

int wire_thread(pthread_t *thr, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(thr, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}
