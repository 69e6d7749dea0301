#!/usr/bin/env bash
# Install everything locus needs on Debian 12 (run as root). Idempotent: a
# machine that already has the packages is not touched.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential cmake ninja-build pkg-config git file
  libhwloc-dev hwloc libnuma-dev numactl
  googletest libgtest-dev
  libibverbs-dev rdma-core ibverbs-providers ibverbs-utils perftest iproute2 kmod
  libdw-dev libelf-dev elfutils
  clang libclang-rt-14-dev
  qemu-system-x86 linux-image-amd64 busybox-static cpio xz-utils zstd
  libucx-dev ucx-utils openmpi-bin libopenmpi-dev
  libpmix-dev mpich
  python3 python3-venv python3-pip
  # the profiler's corpus of real programs (tests/unit/test_prof_corpus.cc)
  # and its shim tests: C, C++, Fortran, Python + numpy, MPI, own allocators
  python3-numpy python3-mpi4py libblas-test xtb swi-prolog-core redis-tools
  libjemalloc2 libtcmalloc-minimal4 make findutils xz-utils bzip2 gzip sqlite3 jq gawk bc
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing Debian packages: ${missing[*]}; run this as root" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python package (reports, plots, tests) in a project-local virtualenv.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import locus, matplotlib, pytest, jsonschema' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e 'python[test]'
fi
echo "deps: ok"
