/* A small JSON reader (prof_json.c): enough to read profiles back. */
#ifndef LOCUS_PROF_JSON_H
#define LOCUS_PROF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { PJ_NULL, PJ_BOOL, PJ_NUM, PJ_STR, PJ_ARR, PJ_OBJ } pj_type_t;

typedef struct pj {
    pj_type_t t;
    double num;      /* PJ_NUM, PJ_BOOL (0/1) */
    char *str;       /* PJ_STR */
    struct pj *kids; /* PJ_ARR, PJ_OBJ */
    char **keys;     /* PJ_OBJ */
    size_t n;
} pj_t;

/* NULL with err set ("at byte N: ...") on bad input. */
pj_t *pj_parse(const char *text, size_t len, char *err, size_t cap);
void pj_free(pj_t *v);
void pj_clear(pj_t *v);
const pj_t *pj_get(const pj_t *obj, const char *key); /* NULL if absent or not an object */
const pj_t *pj_at(const pj_t *arr, size_t i);
size_t pj_len(const pj_t *v);
double pj_num(const pj_t *v, double def);
/* The number as a count or an int (fraction dropped); def if absent, not a
 * number, or out of the type's range (negative, NaN, 1e300: a file's number
 * converted as is would be undefined behaviour). */
uint64_t pj_u64(const pj_t *v, uint64_t def);
int pj_int(const pj_t *v, int def);
const char *pj_str(const pj_t *v, const char *def);
/* Write s (NULL: "") as a JSON string: quotes, backslashes and control
 * characters escaped (the profile and the job report both write with it). */
void pj_write_str(FILE *f, const char *s);

#endif
