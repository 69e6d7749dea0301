#!/bin/sh
# A --prefix install works: locus-oshcc (and -show), locus-oshc++ and pkg-config
# locus-shmem build an OpenSHMEM program (and one that includes <pshmem.h>) from
# the install tree alone, which runs under the installed `locus run`.
#   install_check.sh CMAKE BUILD_DIR SOURCE.c
set -eu
cmake=$1 build=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/prefix" >/dev/null
bin="$tmp/prefix/bin"
"$bin/locus-oshcc" -show "$src" -o x | grep -q -- "-llocus_shmem" || { echo "FAIL: -show"; exit 1; }
"$bin/locus-oshcc" -O1 -I"$(dirname "$src")" "$src" -o "$tmp/a" -lpthread
# <pshmem.h> (the profiling interface) is installed beside <shmem.h>
"$bin/locus-oshcc" -O1 -I"$(dirname "$src")" "$(dirname "$src")/profiling.c" -o "$tmp/e" -lpthread
pc=$(ls -d "$tmp"/prefix/lib*/pkgconfig "$tmp"/prefix/lib/*/pkgconfig 2>/dev/null | head -1)
# locus-shmem.pc, like locus.pc, finds the prefix from its own location: a
# --prefix install other than the configured one gives paths into it (round 9:
# it named the configured prefix, /usr/local, so pkg-config users got -I/-L there)
pcshmem() { PKG_CONFIG_PATH=$1 pkg-config "$2" locus-shmem; }
for v in includedir libdir; do
    d=$(pcshmem "$pc" --variable=$v)
    case "$(realpath -m "$d")" in "$(realpath "$tmp/prefix")"/*) ;;
        *) echo "FAIL: locus-shmem.pc $v is $d, not in the install prefix $tmp/prefix"; exit 1 ;; esac
done
[ -f "$(pcshmem "$pc" --variable=includedir)/locus-shmem/shmem.h" ] || { echo "FAIL: no shmem.h under locus-shmem.pc's includedir"; exit 1; }
cc -O1 -I"$(dirname "$src")" "$src" -o "$tmp/b" $(pcshmem "$pc" --cflags) $(pcshmem "$pc" --libs) \
    -Wl,-rpath,"$(dirname "$pc")" -lpthread
# C++: locus-oshc++ compiles and links with c++ (the C API from a C++ program)
"$bin/locus-oshc++" -show | grep -q "^c++ " || { echo "FAIL: locus-oshc++ -show does not use c++"; exit 1; }
"$bin/locus-oshc++" -O1 "$(dirname "$src")/cxx.cpp" -o "$tmp/c"
for p in a b c e; do
    out=$("$bin/locus" run -n 2 -- "$tmp/$p")
    echo "$out"
    echo "$out" | grep -q FAIL && { echo "FAIL: $p"; exit 1; }
    [ "$(echo "$out" | tail -n 1)" = done ] || { echo "FAIL: $p did not finish"; exit 1; }
done
# the launcher and the spec's names (libexec/locus/osh: oshcc, oshrun, ...)
osh=$(ls -d "$tmp"/prefix/libexec/locus/osh 2>/dev/null) || { echo "FAIL: no libexec/locus/osh"; exit 1; }
out=$("$bin/locus-oshrun" -np 2 "$tmp/a")
[ "$(echo "$out" | tail -n 1)" = done ] && ! echo "$out" | grep -q FAIL || { echo "FAIL: locus-oshrun -np 2: $out"; exit 1; }
"$osh/oshcc" -show x.c | grep -q -- "-llocus_shmem" || { echo "FAIL: libexec/locus/osh/oshcc -show"; exit 1; }
# moved after install: pkg-config locus-shmem follows the tree
mv "$tmp/prefix" "$tmp/moved"
pc=$(ls -d "$tmp"/moved/lib*/pkgconfig "$tmp"/moved/lib/*/pkgconfig 2>/dev/null | head -1)
cc -O1 -I"$(dirname "$src")" "$src" -o "$tmp/d" $(pcshmem "$pc" --cflags) $(pcshmem "$pc" --libs) \
    -Wl,-rpath,"$(dirname "$pc")" -lpthread || { echo "FAIL: pkg-config locus-shmem after moving the prefix"; exit 1; }
out=$("$tmp/moved/bin/locus" run -n 2 -- "$tmp/d")
echo "$out"
[ "$(echo "$out" | tail -n 1)" = done ] && ! echo "$out" | grep -q FAIL || { echo "FAIL: d (moved prefix)"; exit 1; }
# and so do the spec-named symlinks (relative): oshcc builds, oshrun runs
"$tmp/moved/libexec/locus/osh/oshcc" -O1 -I"$(dirname "$src")" "$src" -o "$tmp/g" -lpthread ||
    { echo "FAIL: osh/oshcc after moving the prefix"; exit 1; }
out=$("$tmp/moved/libexec/locus/osh/oshrun" -np 2 "$tmp/g")
[ "$(echo "$out" | tail -n 1)" = done ] && ! echo "$out" | grep -q FAIL || { echo "FAIL: osh/oshrun after moving the prefix: $out"; exit 1; }
echo PASS
