#!/bin/sh
# The installed headers from C++ (shmem.h with its overloads, shmemx.h,
# pshmem.h, mpp/shmem.h), each C++ standard from 11 on, warnings as errors:
# a C++ program includes them all without a diagnostic.
#   headers_cxx.sh CXX INCLUDE_DIR
set -u
cxx=$1 inc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/h.cpp" <<'SRC'
#include <shmem.h>
#include <shmemx.h>
#include <pshmem.h>
#include <mpp/shmem.h>
int main()
{
    int x = 0;
    long y = 0;
    shmem_p(&x, 1, 0);
    (void)shmem_swap(&y, 1L, 0);
    (void)pshmem_swap(&y, 2L, 0);
    pshmem_sync(0, 0, 1, &y);
    return shmem_g(&x, 0) + (int)shmemx_wtime();
}
SRC
fail=0
for std in c++11 c++14 c++17 c++20; do
    if ! "$cxx" -std=$std -Wall -Wextra -pedantic -Werror -I"$inc" -c "$tmp/h.cpp" -o "$tmp/h.o" 2>"$tmp/err"; then
        echo "FAIL: $std"; head -20 "$tmp/err"; fail=1
    else
        echo "ok: $std"
    fi
done
exit $fail
