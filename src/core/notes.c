/* Notes (see notes.h). */
#include "core/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool vnote(lc_notes_t *n, bool once, const char *fmt, va_list ap)
{
    char line[1024];
    int len = vsnprintf(line, sizeof line, fmt, ap);
    if (len < 0)
        return false;
    if ((size_t)len >= sizeof line)
        len = sizeof line - 1;
    if (once && n->text) {
        for (const char *p = n->text; (p = strstr(p, line)) != NULL; p++)
            if ((p == n->text || p[-1] == '\n') && p[len] == '\n')
                return true;
    }
    char *t = realloc(n->text, n->len + (size_t)len + 2);
    if (!t)
        return false;
    memcpy(t + n->len, line, (size_t)len);
    n->len += (size_t)len;
    t[n->len++] = '\n';
    t[n->len] = '\0';
    n->text = t;
    return true;
}

bool lc_note(lc_notes_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = vnote(n, false, fmt, ap);
    va_end(ap);
    return ok;
}

bool lc_note_once(lc_notes_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = vnote(n, true, fmt, ap);
    va_end(ap);
    return ok;
}

void lc_notes_truncate(lc_notes_t *n, size_t len)
{
    if (n->text && len < n->len) {
        n->len = len;
        n->text[len] = '\0';
    }
}

void lc_notes_free(lc_notes_t *n)
{
    free(n->text);
    n->text = NULL;
    n->len = 0;
}
