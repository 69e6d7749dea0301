/* Shared by the examples: one worker thread per online cpu, pinned to it
 * (so threads sit on every NUMA node), and a barrier. */
#ifndef NUMA_EXAMPLES_COMMON_H
#define NUMA_EXAMPLES_COMMON_H

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int nthreads;
static pthread_barrier_t barrier;

static void pin_to_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Runs fn(id) on nthreads pinned threads; id 0 is the calling thread. */
static inline void run_threads(void *(*fn)(void *))
{
    pthread_t t[256];
    for (long i = 1; i < nthreads; i++)
        pthread_create(&t[i], NULL, fn, (void *)i);
    fn((void *)0);
    for (long i = 1; i < nthreads; i++)
        pthread_join(t[i], NULL);
}

static void setup_threads(void)
{
    nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nthreads < 1)
        nthreads = 1;
    if (nthreads > 256)
        nthreads = 256;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pin_to_cpu(0);
}

#endif
