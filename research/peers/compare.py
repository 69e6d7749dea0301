#!/usr/bin/env python3
"""Measure locus's shm transport against its peers in ONE run, and print the
markdown table of research/LOG.md ("### Against the peers"; its target rows go
into the current-numbers table of docs/PERFORMANCE.md).

    sudo python3 research/peers/compare.py [--build build] [--repeats 5] [--quick]

Peers (installed from Debian packages when missing, as root): UCX 1.13
ucx_perftest (tag_lat / tag_bw over posix, sysv, posix+cma and the "sm"
alias), Open MPI 4.1 vader with CMA and without single copy, MPICH 4.0 (the
last two through research/peers/osu_mpi.c, built here with mpicc.openmpi and
mpicc.mpich), the cache-line ping-pong research/peers/clping.c between the same
two CPUs, and locus itself (`locus run -n 2 --bind core -- locus bench ... --json`,
which writes the benchmark record, docs/bench-schema.json; osu_mpi prints a
list of rows: peers_table.parse_osu reads both).

The host moves the two vCPUs between near and far physical cores every few
seconds, which changes every figure, so every run is bracketed by a placement
probe (clping --probe, a few ms); a run counts only when both probes agree with
the reference placement (--reference, default near). Discarded runs are
retried (--retries) and counted in the table. Each run's raw output, the
probes and the parsed figures are saved under --out (results.json can be
re-rendered with --from-json).

Standard library only: run it with the system python3.
"""

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import peers_table as pt  # noqa: E402

PEER_PKGS = ["openmpi-bin", "libopenmpi-dev", "mpich", "libmpich-dev", "ucx-utils"]

OMPI = "Open MPI 4.1 vader + CMA"
OMPI_NONE = "Open MPI 4.1 vader, no single copy"
MPICH = "MPICH 4.0 (ch4:ucx)"
UCX_TLS = [("UCX 1.13 posix", "posix,self"), ("UCX 1.13 sysv", "sysv,self"),
           ("UCX 1.13 posix + cma", "posix,cma,self"), ("UCX 1.13 sm", "sm")]
ROW_ORDER = [pt.LOCUS, pt.LOCUS_PRIVATE, pt.LOCUS_PRIVATE_COPY, pt.LOCUS_TOUCH, OMPI, OMPI_NONE, MPICH] + [r for r, _ in UCX_TLS] + [pt.CL_ONE, pt.CL_TWO, pt.RING_FLOOR, pt.COPY_LIMIT]

# ucx_perftest iterations (-n) per (test, size): ~30-60 ms of traffic in near placement.
UCX_ITERS = {("lat", 8): 100000, ("lat", 4096): 20000, ("lat", 65536): 4000,
             ("lat", 1 << 20): 300, ("bw", 65536): 5000, ("bw", 1 << 20): 500,
             ("bw", 4 << 20): 150, ("mr", 8): 500000, ("mr", 128): 300000,
             ("mr", 1024): 200000}


def log(msg):
    print("compare: " + msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------ installation

def missing_packages(pkgs):
    miss = []
    for p in pkgs:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
        if "install ok installed" not in r.stdout:
            miss.append(p)
    return miss


def ensure_packages():
    miss = missing_packages(PEER_PKGS)
    if not miss:
        return
    if os.geteuid() != 0:
        sys.exit("compare: missing Debian packages %s; run as root to install them" % " ".join(miss))
    log("installing %s" % " ".join(miss))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + miss,
                   check=True, env=env, stdout=subprocess.DEVNULL)


def stale(target, source):
    return not os.path.exists(target) or os.path.getmtime(target) < os.path.getmtime(source)


def build_tools(build, work):
    """osu_mpi for both MPIs; clping from the CMake build when it is current."""
    os.makedirs(work, exist_ok=True)
    src = os.path.join(HERE, "osu_mpi.c")
    tools = {}
    for mpi in ("openmpi", "mpich"):
        out = os.path.join(work, "osu_mpi." + mpi)
        if stale(out, src):
            # -Wno-stringop-overflow: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE.
            subprocess.run(["mpicc." + mpi, "-O2", "-Wall", "-Wno-stringop-overflow", "-o", out,
                            src], check=True)
        tools[mpi] = out
    tools["clping"] = local_tool(build, work, "clping", os.path.join(HERE, "clping.c"))
    fsrc = os.path.join(HERE, "..", "probes", "shm_floor.c")
    if os.path.exists(fsrc):
        tools["shm_floor"] = local_tool(build, work, "shm_floor", fsrc)
    return tools


def local_tool(build, work, name, src):
    """BUILD/bin/NAME when it is newer than SRC, else SRC compiled into WORK."""
    built = os.path.join(build, "bin", name)
    if not stale(built, src):
        return built
    out = os.path.join(work, name)
    if stale(out, src):
        subprocess.run(["cc", "-O2", "-std=gnu11", "-Wall", "-o", out, src], check=True)
    return out


def locus_ready(locus):
    if not os.access(locus, os.X_OK):
        return False
    r = subprocess.run([locus, "bench", "--help"], capture_output=True, text=True)
    return all(w in r.stdout for w in ("pingpong", "bw", "msgrate"))


# ---------------------------------------------------------------- running

def stop(p):
    """End a process group started with start_new_session: SIGTERM first (mpirun
    then takes its ranks down), SIGKILL after 3 s."""
    for sig, grace in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass


def run(cmd, env=None, timeout=180):
    """Run in its own process group; on timeout kill that group. → (rc, out, err)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(p)
        out, err = p.communicate()
        return -9, out, err + "\n[compare: killed after %d s]" % timeout
    except KeyboardInterrupt:
        stop(p)
        raise
    return p.returncode, out, err


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """Is a TCP socket listening on port (from /proc/net/tcp{,6})?"""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for ln in fh:
                    parts = ln.split()
                    if int(parts[1].rsplit(":", 1)[1], 16) == port and parts[3] == "0A":
                        return True
        except OSError:
            pass
    return False


def ucx_run(tls, test, size, iters, timeout=120):
    """Server on CPU 1, client (sender) on CPU 0, as in machine-limits.md."""
    port = free_port()
    env = dict(os.environ, UCX_TLS=tls, UCX_WARN_UNUSED_ENV_VARS="n")
    srv = subprocess.Popen(["taskset", "-c", "1", "ucx_perftest", "-p", str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                           start_new_session=True)
    t0 = time.time()
    while not listening(port) and srv.poll() is None and time.time() - t0 < 10:
        time.sleep(0.005)
    cmd = ["taskset", "-c", "0", "ucx_perftest", "127.0.0.1", "-p", str(port), "-t", test,
           "-s", str(size), "-n", str(iters), "-w", str(max(iters // 10, 10))]
    try:
        rc, out, err = run(cmd, env=env, timeout=timeout)
        srv.communicate(timeout=10)
    except KeyboardInterrupt:
        stop(srv)
        raise
    except subprocess.TimeoutExpired:
        stop(srv)
        srv.communicate()
        rc = rc or -9
    return rc, out, err, "UCX_TLS=%s %s" % (tls, " ".join(cmd))


def cpu_sample():
    """(machine busy + stolen CPU s, our own CPU s incl. reaped children, wall s)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / hz  # user nice system irq softirq steal
    own = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF,
              resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
    return busy, own, time.monotonic()


def foreign_share(s0, s1):
    """Share of the machine's CPU time used by other processes (or stolen by the
    host) between two samples."""
    wall = s1[2] - s0[2]
    if wall <= 0:
        return None
    return max(0.0, ((s1[0] - s0[0]) - (s1[1] - s0[1])) / (wall * os.cpu_count()))


def wait_quiet(max_busy, timeout):
    """Wait (up to timeout s) until other processes use at most max_busy of the
    CPUs over a 0.3 s window; returns the last share seen."""
    t0 = time.monotonic()
    while True:
        s0 = cpu_sample()
        time.sleep(0.3)
        share = foreign_share(s0, cpu_sample())
        if share is None or share <= max_busy or time.monotonic() - t0 > timeout:
            return share


class Session:
    def __init__(self, args, tools):
        self.args, self.tools = args, tools
        self.units, self.n = [], 0
        # After 3 quiet-waits in a row timed out the machine is taken to be busy
        # for good: wait 3 s at most and do not retry busy runs, until a quiet
        # window shows up again.
        self.timeouts, self.busy_mode = 0, False
        # Past the deadline: no more waiting for quiet, no retries, no new repeat.
        self.deadline = time.monotonic() + 60 * args.max_minutes
        # At 1.5 x the budget the rest of the current repeat is skipped.
        self.hard_deadline = time.monotonic() + 90 * args.max_minutes
        self.raw = os.path.join(args.out, "raw")
        os.makedirs(self.raw, exist_ok=True)

    def probe(self):
        rc, out, err = run([self.tools["clping"], "--probe"], timeout=30)
        if rc != 0:
            log("placement probe failed: %s" % err.strip())
            return None
        try:
            return pt.parse_clping(out)
        except pt.ParseError:
            return None

    def save(self, name, text):
        path = os.path.join(self.raw, "%04d-%s.txt" % (self.n, name))
        with open(path, "w") as f:
            f.write(text)
        return os.path.relpath(path, self.args.out)

    def unit(self, rows, label, fn):
        """probe → fn() → probe, retried while the placement is not the reference.

        fn() → (ok, {row: metrics}, raw text, command)."""
        for attempt in range(self.args.retries + 1):
            now = time.monotonic()
            if now > self.hard_deadline:
                return
            late = now > self.deadline
            if late and attempt > 0:
                return
            self.n += 1
            if self.args.quiet_wait > 0 and not late:
                share = wait_quiet(self.args.max_busy,
                                   min(3, self.args.quiet_wait) if self.busy_mode
                                   else self.args.quiet_wait)
                if share is not None and share <= self.args.max_busy:
                    self.timeouts, self.busy_mode = 0, False
                else:
                    self.timeouts += 1
                    self.busy_mode = self.timeouts >= 3
            before = self.probe()
            c0 = cpu_sample()
            try:
                ok, per_row, raw, cmd = fn()
            except (pt.ParseError, KeyError, ValueError) as e:
                ok, per_row, raw, cmd = False, {}, "parse error: %s" % e, "?"
            foreign = foreign_share(c0, cpu_sample())
            after = self.probe()
            path = self.save(label.replace(" ", "_").replace("/", "_"), raw)
            entries = []
            for row in rows:
                u = {"row": row, "test": label, "ok": ok, "cmd": cmd, "raw": path,
                     "before": before and before["placement"],
                     "after": after and after["placement"],
                     "probe_ns": [before and before["two_line_ns"], after and after["two_line_ns"]],
                     "foreign": foreign and round(foreign, 3),
                     "attempt": attempt, "metrics": per_row.get(row, {})}
                entries.append(u)
            self.units.extend(entries)
            verdict = pt.unit_verdict(entries[0], self.args.reference, self.args.max_busy)
            log("%-36s %-17s %s→%s foreign %4.0f%% %s" % (
                rows[0], label, entries[0]["before"], entries[0]["after"],
                100 * (foreign or 0), verdict))
            if verdict in ("kept", "failed") or (verdict == "busy" and self.busy_mode):
                return


def osu_fn(cmd, kind, row, env=None):
    def fn():
        rc, out, err = run(cmd, env=env)
        raw = "$ %s\n%s\n--- stderr ---\n%s" % (" ".join(cmd), out, err)
        if rc != 0:
            return False, {}, raw, " ".join(cmd)
        return True, {row: pt.metrics_from_osu(kind, pt.parse_osu(out))}, raw, " ".join(cmd)
    return fn


def ucx_fn(row, tls, kind, size, iters):
    test = "tag_lat" if kind == "lat" else "tag_bw"

    def fn():
        rc, out, err, cmd = ucx_run(tls, test, size, iters)
        raw = "$ %s\n%s\n--- stderr ---\n%s" % (cmd, out, err)
        if rc != 0:
            return False, {}, raw, cmd
        return True, {row: pt.metrics_from_ucx(kind, size, pt.parse_ucx_perftest(out))}, raw, cmd
    return fn


def cmd_fn(cmd, timeout, metrics):
    """A unit that runs cmd once; metrics(stdout) gives its figures."""
    def fn():
        rc, out, err = run(cmd, timeout=timeout)
        raw = "$ %s\n%s\n--- stderr ---\n%s" % (" ".join(cmd), out, err)
        if rc != 0:
            return False, {}, raw, " ".join(cmd)
        return True, metrics(out), raw, " ".join(cmd)
    return fn


def sizes_arg(sizes):
    return ",".join(str(s) for s in sizes)


def plan(args, tools, sizes, with_locus):
    """The runs of one repeat: [(rows, label, fn)], transports interleaved."""
    units = []
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    bench = {"lat": ("lat", "pingpong"), "bw": ("bw", "bw"), "mr": ("msgrate", "msgrate")}
    mpis = [(OMPI, ["mpirun.openmpi", "-np", "2", "--bind-to", "core", "--mca", "pml", "ob1",
                    "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism",
                    "cma"] + root + [tools["openmpi"]]),
            (OMPI_NONE, ["mpirun.openmpi", "-np", "2", "--bind-to", "core", "--mca", "pml", "ob1",
                         "--mca", "btl", "self,vader", "--mca",
                         "btl_vader_single_copy_mechanism", "none"] + root + [tools["openmpi"]]),
            (MPICH, ["mpirun.mpich", "-np", "2", "-bind-to", "core", tools["mpich"]])]
    if with_locus:
        loc = args.locus
        # The third row is the pipelined copy-in/copy-out that replaces CMA when
        # the kernel refuses it, forced with LOCUS_SHM_CMA=off.
        for row, mem, env in ((pt.LOCUS, "heap", []), (pt.LOCUS_PRIVATE, "private", []),
                              (pt.LOCUS_PRIVATE_COPY, "private", ["env", "LOCUS_SHM_CMA=off"])):
            units += [([row], "locus %s%s %s" % (mem, " cma-off" if env else "", k), osu_fn(
                env + [loc, "run", "-n", "2", "--bind", "core", "--", loc, "bench", bench[k][1],
                       "--sizes", sizes_arg(sizes[k]), "--mem", mem, "--json"], k, row))
                for k in ("lat", "bw", "mr")]
        units += [([pt.LOCUS_TOUCH], "locus heap touch %s" % k, osu_fn(
            [loc, "run", "-n", "2", "--bind", "core", "--", loc, "bench", bench[k][1], "--sizes",
             sizes_arg(sizes[k]), "--touch", "--json"], k, pt.LOCUS_TOUCH)) for k in ("bw", "mr")]
    for row, base in mpis:
        units += [([row], "mpi " + k, osu_fn(base + [bench[k][0], "--sizes", sizes_arg(sizes[k]),
                                                     "--json"], k, row)) for k in ("lat", "bw", "mr")]
    div = 4 if args.quick else 1
    for row, tls in UCX_TLS:
        for k in ("lat", "bw", "mr"):
            for s in sizes[k]:
                units.append(([row], "ucx %s %d" % (k, s),
                              ucx_fn(row, tls, k, s, max(UCX_ITERS[(k, s)] // div, 100))))
    units.append(([pt.CL_ONE, pt.CL_TWO], "clping", cmd_fn(
        [tools["clping"], "--json"], 60, lambda o: pt.metrics_from_clping(pt.parse_clping(o)))))
    if with_locus:
        units.append(([pt.COPY_LIMIT], "copy limit", cmd_fn(
            [args.locus, "bench", "copy", "--sizes", sizes_arg(sizes["bw"]), "--reps", "5",
             "--no-pollution", "--no-kernels"], 180,
            lambda o: pt.metrics_from_copy(pt.parse_bench_copy(o)))))
    if "shm_floor" in tools:
        units.append(([pt.RING_FLOOR], "shm_floor", cmd_fn(
            [tools["shm_floor"], "--reps", "11"], 120,
            lambda o: pt.metrics_from_floor(pt.parse_shm_floor(o)))))
    return units


def conditions():
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    model = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"load": load, "cpu": model, "kernel": platform.release(), "ncpu": os.cpu_count()}


def report(res):
    units = pt.units_from_json(res["units"])
    med, counts = pt.aggregate(units, res["reference"], res.get("max_busy"))
    foreign = pt.foreign_by_row(units, res["reference"], res.get("max_busy"))
    kept, disc, busy, fail = (sum(c[i] for c in counts.values()) for i in range(4))
    c0, c1 = res["conditions_before"], res["conditions_after"]
    head = ["Measured %s UTC by `%s`." % (res["date"], res["command"]),
            "%d repeat(s), transports interleaved; every run bracketed by a placement probe and "
            "kept only when both probes say %s and other processes used at most %.0f %% of "
            "the CPU time while it ran: %d runs kept, %d discarded for placement, %d discarded "
            "as busy, %d failed. Load average %s before, %s after; %s, kernel %s, %s CPUs."
            % (res["repeats"], "the same placement" if res["reference"] == "any" else
               "**%s**" % res["reference"], 100 * (res.get("max_busy") or 1), kept, disc,
               busy, fail, c0["load"], c1["load"], c0["cpu"], c0["kernel"], c0["ncpu"])]
    if res.get("partial"):
        head.append("The run was interrupted: the table holds the runs finished before.")
    if not res["with_locus"]:
        head.append("locus was not measured (not built or --skip-locus): its column is pending.")
    return "\n".join(head) + "\n\n" + pt.render(med, counts, ROW_ORDER, foreign=foreign)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="locus CMake build directory (default: %(default)s)")
    ap.add_argument("--locus", help="locus binary (default: BUILD/bin/locus)")
    ap.add_argument("--repeats", type=int, default=5, help="repeats of every run (default 5)")
    ap.add_argument("--retries", type=int, default=2,
                    help="extra attempts of a run whose placement was not the reference (default 2)")
    ap.add_argument("--reference", choices=("near", "far", "any"),
                    help="placement that counts (default near; any = probes only agree)")
    ap.add_argument("--max-busy", type=float,
                    help="discard a run when other processes (or the host) used more than this "
                    "share of the CPU time while it ran (default 0.10)")
    ap.add_argument("--quiet-wait", type=float, default=30.0,
                    help="before each run, wait up to this many seconds for the machine to be "
                    "quiet (other processes below --max-busy); 0: do not wait (default 30)")
    ap.add_argument("--max-minutes", type=float, default=40.0,
                    help="time budget: past it, stop waiting for quiet, stop retrying and start "
                    "no new repeat; at 1.5x, skip the rest of the repeat (default 40)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1 repeat, fewer sizes, shorter UCX runs")
    ap.add_argument("--skip-locus", action="store_true", help="measure the peers only")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get missing peers")
    ap.add_argument("--out", help="directory for raw outputs and results.json "
                    "(default: BUILD/peers/results-<time>)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="re-render a saved results.json and exit (with --reference and "
                    "--max-busy: re-filtered)")
    args = ap.parse_args()

    if args.from_json:
        with open(args.from_json) as f:
            res = json.load(f)
        # Re-filter a recorded run: an explicit --reference / --max-busy wins.
        if args.reference is not None:
            res["reference"] = args.reference
        if args.max_busy is not None:
            res["max_busy"] = args.max_busy
        sys.stdout.write(report(res))
        return 0
    args.reference = args.reference or "near"
    args.max_busy = 0.10 if args.max_busy is None else args.max_busy
    if args.repeats < 1 or args.retries < 0:
        ap.error("--repeats must be >= 1 and --retries >= 0")
    args.build = os.path.abspath(args.build)
    args.locus = os.path.abspath(args.locus or os.path.join(args.build, "bin", "locus"))
    stamp = datetime.datetime.now(datetime.timezone.utc)
    args.out = os.path.abspath(args.out or os.path.join(
        args.build, "peers", "results-" + stamp.strftime("%Y%m%dT%H%M%S")))
    if args.quick:
        args.repeats = 1
    if not args.no_install:
        ensure_packages()
    for tool in ("ucx_perftest", "mpirun.openmpi", "mpirun.mpich", "taskset"):
        if not shutil.which(tool):
            sys.exit("compare: %s not found (install %s)" % (tool, " ".join(PEER_PKGS)))
    tools = build_tools(args.build, os.path.join(args.build, "peers"))
    with_locus = not args.skip_locus and locus_ready(args.locus)
    if not args.skip_locus and not with_locus:
        log("%s has no `bench pingpong|bw|msgrate`: measuring the peers only" % args.locus)
    if args.quick:
        sizes = {"lat": (8, 65536), "bw": (1 << 20,), "mr": (8, 128)}
    else:
        sizes = {"lat": pt.LAT_SIZES, "bw": pt.BW_SIZES, "mr": pt.MR_SIZES}

    cond0 = conditions()
    sess = Session(args, tools)
    units = plan(args, tools, sizes, with_locus)
    done, interrupted = 0, False

    def save(partial):
        res = {"date": stamp.strftime("%Y-%m-%d %H:%M"),
               "command": " ".join(["python3", os.path.relpath(os.path.abspath(sys.argv[0]),
                                                               ROOT)] + sys.argv[1:]),
               "repeats": done, "reference": args.reference, "max_busy": args.max_busy,
               "with_locus": with_locus, "partial": partial,
               "conditions_before": cond0, "conditions_after": conditions(),
               "units": pt.units_to_json(sess.units)}
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(res, f, indent=1)
        return res

    # SIGTERM (e.g. `timeout`) ends the run like Ctrl-C: what was measured is kept.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        for rep in range(args.repeats):
            if rep > 0 and time.monotonic() > sess.deadline:
                log("--max-minutes reached: stopping after %d repeat(s)" % rep)
                break
            log("repeat %d/%d" % (rep + 1, args.repeats))
            for rows, label, fn in units:
                sess.unit(rows, label, fn)
            done += 1
            save(True)  # a run cut short still leaves every finished repeat on disk
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: reporting %d finished repeat(s) and the runs so far" % done)
    res = save(interrupted)
    text = report(res)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    log("raw outputs and results.json in %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
