#!/usr/bin/env bash
# Install the build into a fresh temporary prefix and use it as a user would:
# pkg-config and find_package(locus), a program that runs alone and one that
# talks through the shared-memory transport under the installed `locus run`.
#   tests/install/run.sh BUILD_DIR
set -euo pipefail
build="$1"
src="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d /tmp/locus-install-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/p"
cmake --install "$build" --prefix "$prefix" >/dev/null
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail() { echo "FAIL: $*"; exit 1; }

# 1. pkg-config, the README's command
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs locus) || fail "pkg-config locus"
inc=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=includedir locus)
[ "$(realpath "$inc")" = "$(realpath "$prefix/include")" ] || fail "includedir $inc is not under $prefix"
cc -o "$tmp/app_pc" "$src/app.c" $flags || fail "cc with pkg-config flags: $flags"
"$tmp/app_pc" | grep -qx ok || fail "app (pkg-config) did not print ok"
hooks=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs locus-hooks) || fail "pkg-config locus-hooks"
libdir=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=libdir locus-hooks)
[ "$(realpath "$libdir")" = "$(realpath "$prefix/lib")" ] || fail "locus-hooks.pc libdir $libdir: $hooks"

# 2. CMake's find_package
cmake -S "$src" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "find_package(locus)"
cmake --build "$tmp/cm" >/dev/null || fail "build with find_package"
"$tmp/cm/app" | grep -qx ok || fail "app (find_package) did not print ok"

# 3. the shared-memory transport under the installed launcher
out=$("$prefix/bin/locus" run -n 2 -- "$tmp/cm/app" 2>&1) || fail "locus run -n 2: $out"
[ "$(echo "$out" | grep -cx ok)" = 2 ] || fail "locus run -n 2: both ranks must print ok: $out"

# 4. moved after install: the .pc files follow their own location
mv "$prefix" "$tmp/moved"
export LD_LIBRARY_PATH="$tmp/moved/lib"
flags=$(PKG_CONFIG_PATH="$tmp/moved/lib/pkgconfig" pkg-config --cflags --libs locus)
cc -o "$tmp/app_moved" "$src/app.c" $flags || fail "cc after moving the prefix"
"$tmp/app_moved" | grep -qx ok || fail "app after moving the prefix"
echo "install: pkg-config, find_package, locus run -n 2 and a moved prefix: ok"
