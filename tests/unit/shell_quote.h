// One word for /bin/sh. Tests that build command lines by hand quote every
// path with it: a checkout or build tree may sit under a path with spaces or
// quotes ("/srv/with space/x"), and a system() or popen() line splits there.
#pragma once
#include <string>

static inline std::string shq(const std::string &s)
{
    std::string r = "'";
    for (char c : s) {
        if (c == '\'')
            r += "'\\''";
        else
            r += c;
    }
    return r + "'";
}
