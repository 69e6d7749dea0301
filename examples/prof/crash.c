/* Dies of SIGSEGV at a known line (CRASH_LINE) after printing one line:
 * the profiler must say "died of signal 11 (SIGSEGV) at crash.c:N", not
 * that its shim did not load. */
#include <stdio.h>
#include <stdlib.h>

static int *volatile nowhere;

int main(void)
{
    double *a = malloc(1 << 20);
    for (int i = 0; i < (1 << 17); i++)
        a[i] = i;
    printf("before the crash: %.0f\n", a[1000]);
    fflush(stdout);
    *nowhere = 1; /* CRASH_LINE */
    free(a);
    return 0;
}
