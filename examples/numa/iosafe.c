/* The access sampler must be invisible to the program: system calls on
 * large heap buffers (read/write/fread/fwrite/readv/writev, the local side of
 * process_vm_readv, move_pages's arrays) never see EFAULT,
 * and the program's own SIGSEGV handler still gets its own faults. Exit 0
 * when all held. Run under `locus profile --access-rate 20000` by the tests. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <numaif.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SIZE (8u << 20)
#define CHUNK (64u << 10)

static sigjmp_buf jb;
static volatile int handled;

static void on_segv(int sig)
{
    (void)sig;
    handled++;
    siglongjmp(jb, 1);
}

static volatile long sink;
static char small[CHUNK / 2]; /* not tracked: the remote side of process_vm_readv */

/* Where the pages of buf are (each asked 32 times: arrays large enough to
 * be tracked and sampled themselves). */
#define NPAGES (32 * SIZE / 4096)
static int placement(char *buf, void **pages, int *status)
{
    for (size_t i = 0; i < NPAGES; i++)
        pages[i] = buf + i % (SIZE / 4096) * 4096;
    return move_pages(0, NPAGES, pages, NULL, status, 0) == 0 ? 0 : 6;
}

static int io_round(char *buf, int fds[2], FILE *zero, void **pages, int *status)
{
    long sum = 0;
    int rc = placement(buf, pages, status);
    if (rc)
        return rc;
    for (size_t i = 0; i < SIZE; i += 4096) /* plain loads: these get sampled */
        sum += buf[i];
    sink += sum;
    for (size_t off = 0; off + CHUNK <= SIZE; off += CHUNK) {
        if (write(fds[1], buf + off, CHUNK) != (ssize_t)CHUNK)
            return 1;
        if (read(fds[0], buf + (SIZE - CHUNK - off), CHUNK) != (ssize_t)CHUNK)
            return 2;
        struct iovec v[2] = {{buf + off, CHUNK / 2}, {buf + SIZE / 2, CHUNK / 2}};
        if (writev(fds[1], v, 2) != (ssize_t)CHUNK || readv(fds[0], v, 2) != (ssize_t)CHUNK)
            return 3;
        if (fread(buf + off, 1, CHUNK, zero) != CHUNK)
            return 4;
        struct iovec l = {buf + off, sizeof small}, r = {small, sizeof small};
        if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof small)
            return 7;
    }
    return 0;
}

int main(void)
{
    char *buf = malloc(SIZE);
    void **pages = malloc(NPAGES * sizeof *pages);
    int *status = malloc(NPAGES * sizeof *status);
    int fds[2];
    FILE *zero = fopen("/dev/zero", "r");
    if (!buf || !pages || !status || pipe(fds) || !zero)
        return 10;
    setvbuf(zero, NULL, _IONBF, 0); /* fread straight into buf */
    memset(buf, 1, SIZE);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rounds = 0;
    do {
        int rc = io_round(buf, fds, zero, pages, status);
        if (rc) {
            perror("iosafe: I/O on a sampled buffer failed");
            return rc;
        }
        rounds++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < 2);
    /* the program's own handler gets its own fault */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    char *guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!sigsetjmp(jb, 1))
        guard[0] = 1;
    printf("iosafe: %d rounds of I/O, own SIGSEGV handler ran %d time(s)\n", rounds, handled);
    return handled == 1 ? 0 : 5;
}
