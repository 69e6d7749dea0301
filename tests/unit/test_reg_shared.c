/* reg: the memory hooks when liblocus is a shared library (the unit tests link
 * the static one): munmap and free of an mmapped glibc chunk reach the cache
 * through the symbols liblocus.so exports. Exit 0 = ok. */
#include <locus/reg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
int main(void){
  locus_reg_attr_t a; locus_reg_attr_init(&a); a.backend=LOCUS_REG_BACKEND_NULL;
  locus_reg_cache_t *c; if(locus_reg_cache_create(&a,&c)) return 2;
  size_t n=1<<20; char *p=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); memset(p,1,n);
  const locus_reg_t *r; locus_reg_get(c,p,n,0,&r); uint64_t id=r->id; locus_reg_put(c,r);
  munmap(p,n); p=mmap(p,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED_NOREPLACE,-1,0);
  locus_reg_get(c,p,n,0,&r); int ok1 = r->id!=id; id=r->id; locus_reg_put(c,r);
  char *m=malloc(8<<20); memset(m,1,8<<20); locus_reg_get(c,m,8<<20,0,&r); locus_reg_put(c,r);
  free(m); locus_reg_stats_t s; locus_reg_stats(c,&s);
  printf("munmap invalidated: %d, free invalidated: %d (invalidations %llu)\n", ok1, s.invalidations>=2, (unsigned long long)s.invalidations);
  locus_reg_cache_destroy(c); return !(ok1 && s.invalidations>=2);
}
