#!/bin/sh
# locus-oshcc (and locus-oshc++) with CC (CXX) naming the wrapper itself, as
# `make CC=locus-oshcc` leaves it in the recipes' environment: the wrapper
# must compile with the plain compiler, not call itself until the argument
# list overflows. Also through a symlink to the wrapper, and -show prints cc;
# a CC of several words is split as make splits it; another implementation's
# library on the command line is dropped.
# usage: oshcc_cc_self.sh <build dir> <a C program>
set -eu
b=$1 prog=$2
w=$b/bin/locus-oshcc wxx=$b/bin/locus-oshc++
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
CC=$w timeout 60 "$w" -o "$tmp/a" "$prog" || fail "CC=locus-oshcc: compile did not finish (status $?)"
[ -x "$tmp/a" ] || fail "CC=locus-oshcc: no program"
ln -s "$w" "$tmp/mycc"
CC=$tmp/mycc timeout 60 "$w" -o "$tmp/b" "$prog" || fail "CC=symlink to locus-oshcc (status $?)"
LOCUS_OSHCC_CC=$w timeout 60 "$w" -o "$tmp/c" "$prog" || fail "LOCUS_OSHCC_CC=locus-oshcc (status $?)"
show=$(CC=$w "$w" -show x.c)
case $show in cc\ *) ;; *) fail "-show with CC=locus-oshcc printed: $show" ;; esac
show=$(CXX=$wxx "$wxx" -show x.cc)
case $show in c++\ *) ;; *) fail "-show with CXX=locus-oshc++ printed: $show" ;; esac
# a CC that is another compiler is still honoured
show=$(CC=gcc "$w" -show x.c)
case $show in gcc\ *) ;; *) fail "-show with CC=gcc printed: $show" ;; esac
# a CC of several words, as make splits $(CC): a compiler with flags, a
# launcher before the compiler (ccache gcc); both used to fail "not found"
CC="gcc -std=gnu11" timeout 60 "$w" -o "$tmp/d" "$prog" || fail "CC='gcc -std=gnu11' (status $?)"
CC="env gcc" timeout 60 "$w" -o "$tmp/e" "$prog" || fail "CC='env gcc' (status $?)"
show=$(CC="gcc -std=gnu11" "$w" -show x.c)
case $show in "gcc -std=gnu11 "*) ;; *) fail "-show with CC='gcc -std=gnu11' printed: $show" ;; esac
show=$(CC="$tmp/mycc -DX=1" "$w" -show x.c)
case $show in cc\ *) ;; *) fail "-show with CC='locus-oshcc -DX=1' printed: $show" ;; esac
# a CC naming a program whose path holds a space stays one word
mkdir "$tmp/with space"
ln -s "$(command -v gcc)" "$tmp/with space/gcc"
CC="$tmp/with space/gcc" timeout 60 "$w" -o "$tmp/f" "$prog" || fail "CC='.../with space/gcc' (status $?)"
# a build line naming another implementation's library (Open MPI's -loshmem,
# SOS's -lsma, ...): dropped with a note, so the program is locus's alone (with
# -loshmem first it linked Open MPI's library and crashed in its shmem_ calls)
LOCUS_OSHCC_CC=cc timeout 60 "$w" -o "$tmp/g" "$prog" -loshmem -lsma -lshmem -loshmpi 2>"$tmp/err" ||
    fail "-loshmem -lsma -lshmem -loshmpi: did not build: $(cat "$tmp/err")"
grep -q "dropped -loshmem" "$tmp/err" && grep -q "dropped -lsma" "$tmp/err" || fail "no note of the dropped libraries: $(cat "$tmp/err")"
ldd "$tmp/g" | grep -q "liblocus_shmem" || fail "-loshmem: not linked with liblocus_shmem"
ldd "$tmp/g" | grep -Eq "liboshmem|libsma|libshmem\.|liboshmpi" && fail "-loshmem: another implementation linked: $(ldd "$tmp/g")"
echo "oshcc_cc_self: 1 passed, 0 failed"
