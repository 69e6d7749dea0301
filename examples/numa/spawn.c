/* A program that does everything a profiler can trip over: threads, fork,
 * exec (of itself, as "child"), a large allocation in every process, and a
 * non-zero exit status (3). Used by the prof tests. */
#include "numa_common.h"

#include <string.h>
#include <sys/wait.h>

#define SIZE (4u << 20)

static char *buf;

static void *touch(void *arg)
{
    long id = (long)arg;
    size_t part = SIZE / (size_t)nthreads;
    memset(buf + part * (size_t)id, (int)id + 1, part);
    return NULL;
}

int main(int argc, char **argv)
{
    setup_threads();
    buf = malloc(SIZE);
    if (!buf)
        return 1;
    run_threads(touch);
    if (argc > 1 && !strcmp(argv[1], "child")) {
        free(buf);
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("spawn: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    free(buf);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 3 : 1;
}
