/* Internal: the tcp rendezvous wire format and socket helpers shared by the
 * hub (boot_hub.c) and its clients (boot_tcp.c).
 *
 * Every message is a 16-byte header {type, arg, len} then len payload bytes,
 * in host byte order (the HELLO magic catches a peer of the other order).
 *   client -> hub   HELLO   payload wire_hello_t
 *                   GATHER  arg = collective number (low 32 bits), payload = mine
 *                   BYE     (locus_boot_fini)
 *                   ABORT   arg = status, payload = message
 *   hub -> client   WELCOME arg = 0, payload = "job\0launcher\0" (once all arrived)
 *                   GATHERED arg = collective number, payload = size*len bytes
 *                   FAIL    payload = why the job failed (sticky)
 *                   REJECT  payload = why this connection is refused
 *                   ABORT   arg = status, payload = message: exit now */
#ifndef LOCUS_BOOT_WIRE_H
#define LOCUS_BOOT_WIRE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <locus/status.h>

enum {
    W_HELLO = 1,
    W_WELCOME,
    W_GATHER,
    W_GATHERED,
    W_BYE,
    W_ABORT,
    W_FAIL,
    W_REJECT, /* arg WIRE_REJECT_RETRY: connect again (a closing hub met a re-join) */
};
#define WIRE_REJECT_RETRY 1u

#define WIRE_MAGIC 0x4c4f4254u /* "LOBT" */
#define WIRE_VERSION 1u
#define WIRE_MAX_PAYLOAD (1ull << 34) /* a sanity bound on one message */
#define WIRE_TEXT_MAX 480             /* failure and abort messages */

typedef struct wire_hdr {
    uint32_t type, arg;
    uint64_t len;
} wire_hdr_t;

typedef struct wire_hello {
    uint32_t magic, version;
    int32_t rank, size;
    int32_t pid;
} wire_hello_t;

/* Split "HOST:PORT" or "[V6]:PORT"; PORT a number in [0, 65535] (0 only if
 * allow_zero). Error names the text and what is accepted. */
locus_status_t wire_parse_address(const char *text, bool allow_zero, char *host, size_t host_len,
                                  char *port, size_t port_len);

/* Header then payload; waits at most timeout_s for the socket to take it
 * (blocking or non-blocking fd). false with errno on failure. */
bool wire_send(int fd, uint32_t type, uint32_t arg, const void *payload, size_t len,
               double timeout_s);
/* Read exactly len bytes from a blocking fd; false on EOF or error. */
bool wire_read_all(int fd, void *buf, size_t len);

/* A listening socket on host:port (SO_REUSEADDR, close-on-exec, non-blocking);
 * *bound_port: the port actually bound. */
locus_status_t wire_listen(const char *host, const char *port, int *fd, int *bound_port);
/* One connection attempt to each address of host:port within timeout_s;
 * returns a blocking, close-on-exec fd with TCP_NODELAY, or -1 with *err the
 * last errno. */
int wire_connect(const char *host, const char *port, double timeout_s, int *err);

/* Start a thread of the rendezvous (hub, watcher) with every signal
 * blocked, so the program's signals go to its own threads and interrupt its
 * own system calls. 0 or an errno. */
int wire_thread(pthread_t *thr, void *(*fn)(void *), void *arg);

#endif
