/* Naming a variable from its source: the line that allocated it is read
 * from the file the debug info names, and the name is the assignment's
 * left-hand side ("c" in "double *c = malloc(n)"). */
#include "prof/prof_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The first plain assignment '=' in [b, e), or NULL. */
static const char *assignment(const char *line, const char *b, const char *e)
{
    for (const char *p = b; p < e; p++)
        if (*p == '=' && p[1] != '=' && (p == line || !strchr("=!<>+-*/%&|^", p[-1])))
            return p;
    return NULL;
}

/* The assignment that holds the allocation: of the line's statements, the
 * first whose right-hand side calls something ("size_t n = 1 << 20; char *a
 * = malloc(n);", "for (i = 0; i < n; i++) t[i] = malloc(m);"), else the
 * first assignment ("tab[i] = new T[n]"). */
static const char *alloc_assignment(const char *line)
{
    const char *first = NULL;
    for (const char *s = line; *s;) {
        const char *end = strchr(s, ';');
        if (!end)
            end = s + strlen(s);
        const char *eq = assignment(line, s, end);
        if (eq && memchr(eq, '(', (size_t)(end - eq)))
            return eq;
        if (!first)
            first = eq;
        s = *end ? end + 1 : end;
    }
    return first;
}

bool prof_guess_name(const char *line, char *name, size_t cap)
{
    /* "double *c = malloc(n);", "s->c = calloc(...)", "tab[i] = new T[n]" */
    const char *eq = alloc_assignment(line);
    if (!eq || strstr(line, "return "))
        return false;
    const char *e = eq;
    while (e > line && isspace((unsigned char)e[-1]))
        e--;
    if (e > line && e[-1] == ']') { /* a[i] = ...: name the array */
        int depth = 0;
        while (e > line) {
            e--;
            if (*e == ']')
                depth++;
            else if (*e == '[' && --depth == 0)
                break;
        }
        while (e > line && isspace((unsigned char)e[-1]))
            e--;
    }
    const char *b = e;
    while (b > line && (isalnum((unsigned char)b[-1]) || b[-1] == '_' || b[-1] == '.' || b[-1] == '>' ||
                        (b[-1] == '-' && *b == '>')))
        b--;
    while (b < e && !(isalpha((unsigned char)*b) || *b == '_'))
        b++;
    if (b >= e || (size_t)(e - b) >= cap)
        return false;
    snprintf(name, cap, "%.*s", (int)(e - b), b);
    return true;
}

/* Line `lineno` (from 1) of a source file, with its newline; false if the
 * file or the line is not there. */
bool prof_source_line(const char *file, int lineno, char *buf, size_t cap)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return false;
    int n = 0;
    bool ok = false;
    while (fgets(buf, (int)cap, f))
        if (++n == lineno) {
            ok = true;
            break;
        }
    fclose(f);
    return ok;
}
