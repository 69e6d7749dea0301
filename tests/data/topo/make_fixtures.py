#!/usr/bin/env python3
"""Regenerate the hwloc XML fixtures of the topo tests (hwloc 2.9 lstopo).

Each fixture starts from `lstopo -i "<synthetic>" --of xml` (or this machine's
topology) and is edited where hwloc cannot express the case directly:
NUMA distances and the zero
or absurd L3 sizes a VM reports. Run from anywhere: python3 make_fixtures.py
"""
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
LSTOPO = "lstopo-no-graphics"


def synthetic(desc):
    return subprocess.run([LSTOPO, "-i", desc, "--of", "xml", "-"], check=True,
                          capture_output=True, text=True).stdout


def local():
    return subprocess.run([LSTOPO, "--no-io", "--of", "xml", "-"], check=True,
                          capture_output=True, text=True).stdout


def add_distances(xml, os_indexes, matrix):
    """A NUMA latency matrix from the OS (kind FROM_OS|MEANS_LATENCY = 5)."""
    n = len(os_indexes)
    values = " ".join(str(v) for row in matrix for v in row)
    block = (f'  <distances2 type="NUMANode" nbobjs="{n}" kind="5" indexing="os">\n'
             f'    <indexes length="{len(" ".join(map(str, os_indexes))) + 1}">'
             f'{" ".join(map(str, os_indexes))} </indexes>\n'
             f'    <u64values length="{len(values) + 1}">{values} </u64values>\n'
             f'  </distances2>\n')
    return xml.replace("  <support ", block + "  <support ", 1)


def set_l3_sizes(xml, sizes):
    it = iter(sizes)
    return re.sub(r'(<object type="L3Cache"[^>]*cache_size=")(\d+)"',
                  lambda m: m.group(1) + str(next(it)) + '"', xml)


def write(name, xml):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(xml)


# One node, two L3 domains of 16 MiB (cpus 0-1 and 2-3).
write("two_l3_one_node.xml", synthetic("pack:1 [numa(memory=8GB)] l3:2 core:2 pu:1"))

# Two nodes (cpus 0-1 and 2-3), SLIT 10/20.
write("two_nodes.xml", add_distances(
    synthetic("pack:2 [numa(memory=1GB)] l3:1 core:2 pu:1"), [0, 1], [[10, 20], [20, 10]]))

# Nodes 0 and 1 with cpus, node 2 memory-only (attached to the machine, as the
# Linux backend does for a CPU-less node), 512 MiB; distances 10/20/30.
# (hwloc numbers the machine-level node after the package nodes.)
mo = synthetic("[numa(memory=512MB)] pack:2 [numa(memory=1GB)] l3:1 core:2 pu:1")
write("memory_only_node.xml", add_distances(
    mo, [0, 1, 2], [[10, 20, 30], [20, 10, 30], [30, 30, 10]]))

# A VM that reports L3 size 0: this machine's topology with every L3 size zeroed.
loc = re.sub(r'\s*<info name="(HostName|ProcessName)"[^>]*/>', "", local())
write("vm_l3_zero.xml", re.sub(r'(<object type="L3Cache"[^>]*cache_size=")\d+"', r'\g<1>0"', loc))

# Absurd sizes: 64 GiB on the domain of cpus 0-1, 100 bytes on that of cpus 2-3.
write("l3_absurd.xml", set_l3_sizes(
    synthetic("pack:1 [numa(memory=1GB)] l3:2 core:2 pu:1"), [64 << 30, 100]))
