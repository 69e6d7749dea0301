/* locus status codes: every library call returns one; never exit(). */
#ifndef LOCUS_STATUS_H
#define LOCUS_STATUS_H

/* Public symbols are marked LOCUS_API; everything else in liblocus is hidden. */
#if defined(__GNUC__)
#define LOCUS_API __attribute__((visibility("default")))
#else
#define LOCUS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum locus_status {
    LOCUS_OK               = 0,
    LOCUS_ERR_INVALID      = -1,  /* bad argument or bad tunable value */
    LOCUS_ERR_NO_MEMORY    = -2,  /* allocation or mapping failed */
    LOCUS_ERR_UNSUPPORTED  = -3,  /* feature not available on this machine */
    LOCUS_ERR_RANGE        = -4,  /* value outside what the machine allows */
    LOCUS_ERR_SYSTEM       = -5,  /* a system call failed; detail has errno */
    LOCUS_ERR_NO_DEVICE    = -6,  /* no usable device (RDMA, PMU, ...) */
    LOCUS_ERR_PERMISSION   = -7,  /* the kernel refused (EPERM/EACCES) */
    LOCUS_ERR_NO_SPACE     = -8,  /* a queue, segment or cache is full */
    LOCUS_ERR_PEER_FAILED  = -9,  /* a peer process died or misbehaved */
    LOCUS_ERR_TIMEOUT      = -10, /* a bounded wait expired */
    LOCUS_ERR_BUSY         = -11, /* resource still in use */
    LOCUS_ERR_NOT_FOUND    = -12, /* no such object */
    LOCUS_ERR_AGAIN        = -13, /* try again (non-blocking call) */
    LOCUS_ERR_TRUNCATED    = -14, /* message longer than the receive buffer */
    LOCUS_ERR_CORRUPT      = -15, /* shared state failed a bounds/sanity check */
} locus_status_t;

/* Short generic text for a code ("invalid argument"). Never NULL. */
LOCUS_API const char *locus_strerror(locus_status_t status);

/* The detailed message of the last failure on this thread, naming the value
 * and what is accepted, e.g. "LOCUS_HEAP_SIZE='12Q': expected bytes with an
 * optional K/M/G/T suffix or a percentage such as 50%". Empty if none. */
LOCUS_API const char *locus_last_error(void);

/* Clear this thread's last error. */
LOCUS_API void locus_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
