/* Exercises every call the profiler's preload shim interposes, from
 * several threads, across fork, vfork, exec, posix_spawn and system, with
 * a library (early_lib.c) that allocates in its constructor and from a
 * thread started there. Prints a deterministic summary; exit status 0 when
 * everything behaved, else the number of the failed step.
 *   prof_stress            the whole run
 *   prof_stress child N    what the exec'd children run (exit N) */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int early_exercise(size_t big);
long early_stop(void);
extern char **environ;

static void *worker(void *arg)
{
    long bad = 0;
    for (int i = 0; i < 200; i++)
        bad |= early_exercise((size_t)(64 + (i % 7) * 32) * 1024);
    return (void *)bad;
}

static int wait_code(pid_t p)
{
    int st = 0;
    if (waitpid(p, &st, 0) != p)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int child_main(int code)
{
    if (early_exercise(1 << 20) != 0)
        return 99;
    return code;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "child"))
        return child_main(atoi(argv[2]));
    const char *self = "/proc/self/exe";
    char exe[4096];
    ssize_t n = readlink(self, exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = 0;

    /* threads */
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 2;
    long bad = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= (long)r;
    }
    if (bad)
        return 3;
    printf("threads: ok\n");

    /* fork: the child allocates and exits with its own code */
    pid_t p = fork();
    if (p == 0)
        _exit(early_exercise(1 << 20) ? 99 : 7);
    if (wait_code(p) != 7)
        return 4;
    /* fork + exec (execv, execl, execvp) */
    char *args[] = {exe, "child", "11", NULL};
    if ((p = fork()) == 0) {
        execv(exe, args);
        _exit(98);
    }
    if (wait_code(p) != 11)
        return 5;
    if ((p = fork()) == 0) {
        execl(exe, exe, "child", "12", (char *)NULL);
        _exit(98);
    }
    if (wait_code(p) != 12)
        return 6;
    /* vfork + exec: the child shares our memory until the exec */
    char *vargs[] = {exe, "child", "13", NULL};
    if ((p = vfork()) == 0) {
        execve(exe, vargs, environ);
        _exit(98);
    }
    if (wait_code(p) != 13)
        return 7;
    /* posix_spawn, system */
    char *sargs[] = {exe, "child", "14", NULL};
    if (posix_spawn(&p, exe, NULL, NULL, sargs, environ) != 0 || wait_code(p) != 14)
        return 8;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' child 15", exe);
    int st = system(cmd);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 15)
        return 9;
    /* a failed exec goes on in this image */
    if (execl("/nonexistent/prog", "x", (char *)NULL) != -1 || errno != ENOENT)
        return 10;
    if (early_exercise(1 << 20) != 0)
        return 11;
    printf("processes: ok\n");

    /* a big array, used: the profile has something to show */
    size_t len = 32u << 20;
    double *grid = malloc(len);
    if (!grid)
        return 12;
    double sum = 0;
    for (size_t i = 0; i < len / sizeof *grid; i++)
        grid[i] = (double)(i % 1000);
    for (size_t i = 0; i < len / sizeof *grid; i++)
        sum += grid[i];
    free(grid);
    printf("sum: %.0f\n", sum);
    if (!early_stop())
        return 13;
    printf("early thread: ok\n");
    return 0;
}
