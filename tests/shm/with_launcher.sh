#!/bin/sh
# Run a test program under an MPI launcher, or skip (exit 77, ctest
# SKIP_RETURN_CODE) with a message saying what to install.
# Usage: with_launcher.sh LAUNCHER PACKAGE -- launcher-arguments...
set -u
L=$1 PKG=$2
shift 3
if ! command -v "$L" >/dev/null 2>&1; then
    echo "skipped: $L is not installed (apt-get install $PKG; scripts/deps.sh)"
    exit 77
fi
[ "$(id -u)" = 0 ] && case "$L" in *openmpi*|orterun|prterun) set -- --allow-run-as-root "$@" ;; esac
exec "$L" "$@"
