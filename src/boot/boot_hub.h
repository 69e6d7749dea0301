/* Internal: the rendezvous hub's state, shared by its two halves:
 * boot_hub_job.c (what the messages mean: arrivals, collectives, failures,
 * aborts, exit reports, timers) and boot_hub.c (the thread: poll, accept,
 * reading connections; creation and the launcher's API). */
#ifndef LOCUS_BOOT_HUB_H
#define LOCUS_BOOT_HUB_H

#include "boot/boot_internal.h"
#include "boot/boot_wire.h"

#include "core/error.h"

#define LOST_GRACE_S 0.5 /* launcher mode: wait this long for the exit report of a closed rank */

/* P_REJOIN: left (BYE), then said HELLO again to join the job anew (an
 * OpenSHMEM program initialized again after shmem_finalize); waits for
 * every rank to do the same. */
typedef enum { P_ABSENT, P_ARRIVED, P_LOST, P_BYE, P_GONE, P_REJOIN } peer_state_t;

typedef struct hub_conn {
    int fd;
    int rank; /* -1 until a valid HELLO */
    wire_hdr_t hdr;
    size_t got; /* bytes of the current message read: header, then payload */
    char *buf;
    size_t cap;
} hub_conn_t;

typedef struct hub_peer {
    hub_conn_t *conn;
    peer_state_t st;
    double lost_at;
    bool gave;   /* contributed to the current collective */
    bool exited; /* its process ended after it left (the launcher's report) */
} hub_peer_t;

struct locus_boot_hub {
    int lfd, wake[2];
    pthread_t thr;
    bool thr_started;
    int size;
    char job[BOOT_JOB_MAX + 1], launcher[16], addr[LOCUS_BOOT_ADDRESS_MAX + 8];
    double timeout, t0; /* t0: the first arrival (0: nobody yet) */
    bool accept_broken;
    hub_conn_t **conns;
    int nconn, capconn;
    hub_peer_t *peers;
    int arrived;
    int rejoining;   /* ranks in P_REJOIN */
    double t_rejoin; /* the first of them */
    /* the collective in progress */
    uint32_t seq;
    int gave, first_rank;
    uint64_t glen;
    char *gbuf;
    bool failed;
    uint32_t fail_code; /* -locus_status_t */
    char fail[WIRE_TEXT_MAX];
    /* shared with the launcher / rank 0's fini */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool aborted, all_left, job_failed;
    int ab_rank, ab_status;
    char ab_msg[WIRE_TEXT_MAX];
};

typedef struct { int32_t rank, ws; } hub_report_t; /* rank -1: stop */

/* boot_hub_job.c */
void boot_hub_on_message(locus_boot_hub_t *h, hub_conn_t *c);
/* A rank's connection closed without BYE. */
void boot_hub_on_closed(locus_boot_hub_t *h, hub_conn_t *c);
void boot_hub_on_report(locus_boot_hub_t *h, hub_report_t rep);
/* The arrival timeout and the grace of closed ranks (launcher mode). */
void boot_hub_check_timers(locus_boot_hub_t *h);
/* Everyone left (BYE or gone); after a failure, absent ranks count as gone. */
bool boot_hub_all_left(const locus_boot_hub_t *h);
/* Milliseconds until the next timer (-1: none). */
int boot_hub_poll_ms(const locus_boot_hub_t *h);
/* The job failed: tell everyone connected, once (the first cause wins). */
void boot_hub_fail(locus_boot_hub_t *h, const char *fmt, ...) LOCUS_PRINTF(2, 3);
void boot_hub_conn_close(locus_boot_hub_t *h, hub_conn_t *c);

/* boot_hub.c */
/* Read what is there; handle every complete message. false: closed. */
bool boot_hub_conn_read(locus_boot_hub_t *h, hub_conn_t *c);

#endif
