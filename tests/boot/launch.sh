#!/bin/sh
# launch.sh LAUNCHER N PROG [ARGS...]: run N copies of PROG under an MPI
# launcher. Exits 77 (ctest: skipped) saying so when the launcher is absent.
launcher=$1
n=$2
shift 2
if ! command -v "$launcher" >/dev/null 2>&1; then
  echo "SKIP: $launcher not found (scripts/deps.sh installs it)"
  exit 77
fi
case $launcher in
  mpirun.openmpi)
    set -- --oversubscribe "$@"
    [ "$(id -u)" = 0 ] && set -- --allow-run-as-root "$@"
    ;;
esac
exec "$launcher" -n "$n" "$@"
