/* Scratch probe of 2026-11-28 (research/LOG.md, "how the first write meets the zeroing"): 2 pinned
 * threads fault in and write TOTAL MiB of anon THP or of a huge tmpfs file fallocated first
 * (PROBE_TMPFS names one, default /tmp/s28/ht: mount -t tmpfs -o huge=always none DIR). Modes: 0 MADV_POPULATE_WRITE
 * only, 1 one memset per thread, 2 memsets of 2 MiB, 3 a loop of 8-byte stores; then a second
 * pass over the resident memory.  gcc -O2 -o p heap_write_probe.c -lpthread; ./p 4096 tmpfs-reserve 2 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static size_t per; static int mode; static char *base; static pthread_barrier_t bar;
static double tt[2];
static void *th(void *a){ int i=(int)(long)a; cpu_set_t s; CPU_ZERO(&s); CPU_SET(i,&s); sched_setaffinity(0,sizeof s,&s);
  char *p=base+i*per; pthread_barrier_wait(&bar); double t0=now();
  if(mode==0) madvise(p,per,MADV_POPULATE_WRITE);       /* zero only */
  else if(mode==1) memset(p,1,per);                      /* zero + write (fault during write) */
  else if(mode==3){ unsigned long *q=(unsigned long*)p; size_t n=per/8; for(size_t k=0;k<n;k++) q[k]=k*0x9E3779B97F4A7C15ul; }
  else if(mode==2){ for(size_t o=0;o<per;o+=2<<20){ memset(p+o,1,2<<20);} }
  tt[i]=now()-t0; return 0;}
int main(int argc,char**argv){ size_t tot=strtoull(argv[1],0,0)<<20; const char*kind=argv[2]; mode=atoi(argv[3]); int nth=2;
  per=tot/nth; int fd=-1; double ta=now();
  if(!strcmp(kind,"anon")){ base=mmap(0,tot+(2<<20),PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); base=(char*)(((unsigned long)base+(2<<20)-1)&~((2UL<<20)-1)); madvise(base,tot,MADV_HUGEPAGE);}
  else { char path[256]; const char*dir=getenv("PROBE_TMPFS"); snprintf(path,sizeof path,"%s/f%d",dir?dir:"/tmp/s28/ht",getpid()); fd=open(path,O_RDWR|O_CREAT|O_EXCL,0600); unlink(path);
    if(!strcmp(kind,"tmpfs-reserve")) fallocate(fd,0,0,tot); else ftruncate(fd,tot);
    base=mmap(0,tot,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);}
  double tb=now();
  pthread_barrier_init(&bar,0,nth); pthread_t t[2]; for(long i=0;i<nth;i++) pthread_create(&t[i],0,th,(void*)i); for(int i=0;i<nth;i++) pthread_join(t[i],0);
  double tc=now();
  /* second pass: write resident memory */
  mode=1; pthread_t u[2]; for(long i=0;i<nth;i++) pthread_create(&u[i],0,th,(void*)i); for(int i=0;i<nth;i++) pthread_join(u[i],0);
  double td=now();
  munmap(base,tot); if(fd>=0) close(fd); double te=now();
  printf("%s mode=%d setup=%.3f first=%.3f (%.1f GB/s) resident_write=%.3f (%.1f GB/s) free=%.3f\n",kind,atoi(argv[3]),tb-ta,tc-tb,tot/(tc-tb)/1e9,td-tc,tot/(td-tc)/1e9,te-td);
}
