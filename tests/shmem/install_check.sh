#!/bin/sh
# A --prefix install works: locus-oshcc (and -show), locus-oshc++ and pkg-config
# locus-shmem build an OpenSHMEM program from the install tree alone, which
# runs under the installed `locus run`.
#   install_check.sh CMAKE BUILD_DIR SOURCE.c
set -eu
cmake=$1 build=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/prefix" >/dev/null
bin="$tmp/prefix/bin"
"$bin/locus-oshcc" -show "$src" -o x | grep -q -- "-llocus_shmem" || { echo "FAIL: -show"; exit 1; }
"$bin/locus-oshcc" -O1 -I"$(dirname "$src")" "$src" -o "$tmp/a" -lpthread
pc=$(ls -d "$tmp"/prefix/lib*/pkgconfig "$tmp"/prefix/lib/*/pkgconfig 2>/dev/null | head -1)
# the .pc files name the configured prefix: point pkg-config at this one
PKG_CONFIG_PATH=$pc cc -O1 -I"$(dirname "$src")" "$src" -o "$tmp/b" \
    $(PKG_CONFIG_PATH=$pc pkg-config --define-variable=prefix="$tmp/prefix" --cflags --libs locus-shmem) \
    -Wl,-rpath,"$(dirname "$pc")" -lpthread
# C++: locus-oshc++ compiles and links with c++ (the C API from a C++ program)
"$bin/locus-oshc++" -show | grep -q "^c++ " || { echo "FAIL: locus-oshc++ -show does not use c++"; exit 1; }
"$bin/locus-oshc++" -O1 "$(dirname "$src")/cxx.cpp" -o "$tmp/c"
for p in a b c; do
    out=$("$bin/locus" run -n 2 -- "$tmp/$p")
    echo "$out"
    echo "$out" | grep -q FAIL && { echo "FAIL: $p"; exit 1; }
    [ "$(echo "$out" | tail -n 1)" = done ] || { echo "FAIL: $p did not finish"; exit 1; }
done
echo PASS
