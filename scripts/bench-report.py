#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""make bench's report: the table, the targets and the chart of one run.

Usage: scripts/bench-report.py [--markdown] RESULTS-DIR [PNG]

RESULTS-DIR holds what the guest scenario (tools/testing/sroce-vm/
scenarios/bench.sh) wrote: bench-raw.txt, bench-speed.txt,
bench-counters.txt and bench-meta.txt.  Prints the table (medians over the
rounds, sroce over rdma_rxe, sroce over the per-byte limit, and the base
build when the run had one), the clean-link check and the targets (issue
19's across the veth, issue 20's on one host);
writes the chart to PNG when given and matplotlib is there.  With
--markdown it prints instead the README's summary table: 4 KiB and 64 KiB
bandwidth and 2-byte latency at both path MTUs.

The per-byte limit model: every payload byte is copied once and passes
through CRC-32 once on the sending side, and again on the receiving side;
with sender and receiver on different vCPUs a direction moves at most
1 / (1/memcpy + 1/crc) bytes a second.  On one host (topo "host") no
byte passes through CRC-32 and the limit is one memcpy.  Bandwidth is in
perftest's MB/s (2^20 bytes), as are the speeds.

Exit: 0, or 1 if a run failed or sroce's clean-link counters are not zero.
"""

import statistics
import sys
from collections import defaultdict
from pathlib import Path

SROCE = "sroce"
RXE = "rxe"
BASE = "base"
NETDEV_MTU = {1024: 1500, 4096: 9000}
RESENDS = ("completer_retry_err", "rcvd_seq_err", "rcvd_rnr_err")
NAKS = ("send_seq_err", "send_rnr_err")


def read_meta(res):
    meta = {}
    for line in (res / "bench-meta.txt").read_text().splitlines():
        key, _, val = line.partition(" ")
        meta[key] = val
    return meta


def read_speed(res):
    """memcpy and the faster CRC-32 engine, MiB/s, and that engine's name."""
    words = (res / "bench-speed.txt").read_text().split()
    vals = dict(zip(words[0::2], words[1::2]))
    copy = int(vals["memcpy"])
    lib = int(vals["crc32_le"])
    shash = int(vals.get("shash", "0"))
    if shash > lib:
        return copy, shash, "crypto crc32"
    return copy, lib, "crc32_le"


def read_raw(res):
    """{(prov, mtu, test, size, qps): [values]} and the failed runs."""
    cells = defaultdict(list)
    fails = defaultdict(int)
    order = []
    for line in (res / "bench-raw.txt").read_text().splitlines():
        prov, mtu, test, size, qps, _round, val = line.split()
        key = (prov, int(mtu), test, int(size), int(qps))
        if (test, int(size), int(qps)) not in order:
            order.append((test, int(size), int(qps)))
        if val == "fail":
            fails[key] += 1
        else:
            cells[key].append(float(val))
    return cells, fails, order


def read_counters(res):
    """{(prov, counter): sum over every run and both devices}, and
    {(prov, mtu, test, size, qps): {counter: sum}} of the runs that moved
    one"""
    sums = defaultdict(int)
    cells = defaultdict(lambda: defaultdict(int))
    path = res / "bench-counters.txt"
    if path.exists():
        for line in path.read_text().splitlines():
            prov, mtu, test, size, qps, _round, _dev, name, val = line.split()
            sums[(prov, name)] += int(val)
            cells[(prov, int(mtu), test, int(size), int(qps))][name] += int(val)
    return sums, cells


class Report:
    def __init__(self, res):
        self.meta = read_meta(res)
        self.copy, self.crc, self.engine = read_speed(res)
        self.host = self.meta.get("topo", "veth") == "host"
        if self.host:
            self.limit = float(self.copy)
        else:
            self.limit = 1.0 / (1.0 / self.copy + 1.0 / self.crc)
        self.cells, self.fails, self.order = read_raw(res)
        self.counters, self.moved = read_counters(res)
        self.provs = self.meta["providers"].split()
        self.ok = not self.fails

    def median(self, prov, mtu, test, size, qps):
        vals = self.cells.get((prov, mtu, test, size, qps))
        return statistics.median(vals) if vals else None

    def ratio(self, a, b, mtu, cell):
        va = self.median(a, mtu, *cell)
        vb = self.median(b, mtu, *cell)
        if va is None or not vb:
            return None
        return va / vb

    def header(self):
        m = self.meta
        topo = ("one device on one host" if self.host else "veth pair")
        print(f"# make bench: perftest {m.get('perftest', '?')}, RC, IPv4 GIDs,"
              f" {topo}; kernel {m['kernel']}, {m['vcpus']} vCPUs;"
              f" medians of {m['rounds']} rounds alternating the providers")
        if BASE in self.provs:
            print(f"# base: sroce.ko of {m.get('base_rev', m.get('base'))}")
        if self.host:
            print(f"# per-byte limit (one copy per byte): memcpy"
                  f" {self.copy} MB/s")
        else:
            print(f"# per-byte limit (one copy and one CRC-32 pass per byte"
                  f" on each side): memcpy {self.copy}, CRC-32 {self.crc}"
                  f" ({self.engine}) -> {self.limit:.0f} MB/s")
        print("# bandwidth: BW average (MB/s, higher is better);"
              " latency: t_typical (usec, lower is better); (NF): N runs failed")

    def row(self, mtu, cell):
        test, size, qps = cell
        lat = test.endswith("_lat")
        out = f"{test:<13} {size:>7} {qps:>3} {'usec' if lat else 'MB/s':>4}"
        for prov in self.provs:
            val = self.median(prov, mtu, *cell)
            txt = "-" if val is None else f"{val:.2f}"
            nfail = self.fails.get((prov, mtu, *cell))
            if nfail:
                txt += f"({nfail}F)"
            out += f" {txt:>11}"
        for a, b in self.ratio_columns():
            r = self.ratio(a, b, mtu, cell)
            out += f" {'-' if r is None else f'{r:.2f}':>10}"
        val = self.median(SROCE, mtu, *cell)
        if lat or val is None:
            out += f" {'-':>11}"
        else:
            out += f" {val / self.limit:>11.2f}"
        return out

    def ratio_columns(self):
        cols = [(SROCE, RXE)] if RXE in self.provs else []
        if BASE in self.provs:
            cols.append((SROCE, BASE))
        cols += [(SROCE, p) for p in self.provs if p.startswith(SROCE + ":")]
        return cols

    def table(self):
        self.header()
        for mtu in sorted(NETDEV_MTU):
            print(f"\npath MTU {mtu} (netdev MTU {NETDEV_MTU[mtu]})")
            head = f"{'test':<13} {'size':>7} {'qps':>3} {'unit':>4}"
            for prov in self.provs:
                head += f" {prov:>11}"
            for a, b in self.ratio_columns():
                head += f" {a + '/' + b:>10}"
            print(head + f" {'sroce/limit':>11}")
            for cell in self.order:
                print(self.row(mtu, cell))

    def clean_link(self):
        resends = sum(self.counters[(SROCE, c)] for c in RESENDS)
        naks = sum(self.counters[(SROCE, c)] for c in NAKS)
        dups = self.counters[(SROCE, "duplicate_request")]
        parts = ", ".join(f"{c} {self.counters[(SROCE, c)]}"
                          for c in RESENDS + NAKS + ("duplicate_request",))
        verdict = "OK" if resends + naks + dups == 0 else "NOT CLEAN"
        print(f"\nclean link, sroce over every run: {parts}: {verdict}")
        if verdict != "OK":
            self.ok = False
        for key, moved in sorted(self.moved.items()):
            if key[0] != SROCE:
                continue
            _prov, mtu, test, size, qps = key
            what = ", ".join(f"{c} {n}" for c, n in sorted(moved.items()))
            print(f"  {test} {size} B, {qps} QP, path MTU {mtu}: {what}")

    def target(self, what, val, goal, better_low=False):
        if val is None:
            print(f"  {what}: not measured")
            return
        met = val <= goal if better_low else val >= goal
        sign = "<=" if better_low else ">="
        print(f"  {what}: {val:.2f} (target {sign} {goal}):"
              f" {'met' if met else 'not met'}")

    def targets(self):
        if self.host:
            self.host_targets()
        else:
            self.wire_targets()

    def host_targets(self):
        print("\ntargets (issue 20, one host):")
        for test in ("ib_write_bw", "ib_send_bw", "ib_read_bw"):
            cell = (test, 65536, 1)
            for mtu in sorted(NETDEV_MTU):
                self.target(f"{test} 64 KiB, MTU {mtu}, sroce/rxe",
                            self.ratio(SROCE, RXE, mtu, cell), 10)
                val = self.median(SROCE, mtu, *cell)
                self.target(f"{test} 64 KiB, MTU {mtu}, sroce/memcpy",
                            None if val is None else val / self.limit, 0.5)
        for mtu in sorted(NETDEV_MTU):
            self.target(f"ib_send_lat 2 B, MTU {mtu}, sroce/rxe",
                        self.ratio(SROCE, RXE, mtu, ("ib_send_lat", 2, 1)),
                        0.3, better_low=True)
            one = self.median(SROCE, mtu, "ib_write_bw", 65536, 1)
            eight = self.median(SROCE, mtu, "ib_write_bw", 65536, 8)
            self.target(f"ib_write_bw 64 KiB, MTU {mtu}, 8 QPs/1 QP",
                        eight / one if one and eight else None, 1.7)

    def wire_targets(self):
        print("\ntargets (issue 19):")
        for test in ("ib_write_bw", "ib_send_bw", "ib_read_bw"):
            cell = (test, 65536, 1)
            self.target(f"{test} 64 KiB, MTU 1024, sroce/rxe",
                        self.ratio(SROCE, RXE, 1024, cell), 10)
            self.target(f"{test} 64 KiB, MTU 4096, sroce/rxe",
                        self.ratio(SROCE, RXE, 4096, cell), 4)
            val = self.median(SROCE, 4096, *cell)
            self.target(f"{test} 64 KiB, MTU 4096, sroce/limit",
                        None if val is None else val / self.limit, 0.6)
        for test in ("ib_send_lat", "ib_write_lat"):
            for mtu in sorted(NETDEV_MTU):
                self.target(f"{test} 2 B, MTU {mtu}, sroce/rxe",
                            self.ratio(SROCE, RXE, mtu, (test, 2, 1)), 0.5,
                            better_low=True)


def markdown(rep):
    """The README's table: the cells a reader compares first."""
    print("| test | size | path MTU | sroce | rdma_rxe | sroce/rxe | sroce/limit |")
    print("|---|---|---|---|---|---|---|")
    cells = [(t, s, 1) for t in ("ib_write_bw", "ib_send_bw", "ib_read_bw")
             for s in (4096, 65536)]
    cells += [(t, 2, 1) for t in ("ib_send_lat", "ib_write_lat")]
    for cell in cells:
        if cell not in rep.order:
            continue
        for mtu in sorted(NETDEV_MTU):
            val = rep.median(SROCE, mtu, *cell)
            rxe = rep.median(RXE, mtu, *cell)
            ratio = rep.ratio(SROCE, RXE, mtu, cell)
            lat = cell[0].endswith("_lat")
            unit = "usec" if lat else "MB/s"
            lim = "-" if lat or val is None else f"{val / rep.limit:.2f}"
            fmt = (lambda v: "-" if v is None else f"{v:.1f}")
            print(f"| `{cell[0]}` | {cell[1]} | {mtu} | {fmt(val)} {unit} |"
                  f" {fmt(rxe)} {unit} |"
                  f" {'-' if ratio is None else f'{ratio:.2f}'} | {lim} |")


def chart(rep, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench-report: no matplotlib (python3-matplotlib): no chart",
              file=sys.stderr)
        return
    tests = ("ib_write_bw", "ib_send_bw", "ib_read_bw")
    fig, axes = plt.subplots(3, 3, figsize=(15, 12))
    for row, mtu in enumerate(sorted(NETDEV_MTU)):
        for col, test in enumerate(tests):
            bw_panel(axes[row][col], rep, mtu, test)
    for col, mtu in enumerate(sorted(NETDEV_MTU)):
        lat_panel(axes[2][col], rep, mtu)
    q8_panel(axes[2][2], rep)
    fig.suptitle(f"sroce make bench: {rep.meta['kernel']},"
                 f" {rep.meta['vcpus']} vCPUs (QEMU TCG), veth;"
                 f" medians of {rep.meta['rounds']} rounds")
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    print(f"bench-report: chart {png}", file=sys.stderr)


def bw_panel(ax, rep, mtu, test):
    sizes = sorted({s for (t, s, q) in rep.order if t == test and q == 1})
    for prov in rep.provs:
        pts = [(s, rep.median(prov, mtu, test, s, 1)) for s in sizes]
        pts = [(s, v) for s, v in pts if v is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=prov)
    ax.axhline(rep.limit, linestyle="--", color="grey", label="per-byte limit")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title(f"{test}, path MTU {mtu}")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("MB/s (log scale)")
    ax.legend(fontsize="small")


def bars(ax, rep, groups, title, ylabel):
    width = 0.8 / max(len(rep.provs), 1)
    for i, prov in enumerate(rep.provs):
        vals = [rep.median(prov, *g[1:]) or 0 for g in groups]
        ax.bar([x + i * width for x in range(len(groups))], vals, width,
               label=prov)
    ax.set_xticks([x + width * (len(rep.provs) - 1) / 2
                   for x in range(len(groups))])
    ax.set_xticklabels([g[0] for g in groups], fontsize="small")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def lat_panel(ax, rep, mtu):
    groups = [(f"{t[3:-4]} {s} B", mtu, t, s, 1) for (t, s, q) in rep.order
              if t.endswith("_lat")]
    bars(ax, rep, groups, f"latency, path MTU {mtu}", "usec (lower is better)")


def q8_panel(ax, rep):
    groups = [(f"{t[3:-3]} {m}", m, t, s, q) for m in sorted(NETDEV_MTU)
              for (t, s, q) in rep.order if q == 8]
    bars(ax, rep, groups, "64 KiB over 8 QPs, by path MTU", "MB/s")


def main():
    args = [a for a in sys.argv[1:] if a != "--markdown"]
    if len(args) not in (1, 2):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    rep = Report(Path(args[0]))
    if len(args) + 1 < len(sys.argv):
        markdown(rep)
        return 0
    rep.table()
    rep.clean_link()
    rep.targets()
    if len(args) == 2:
        chart(rep, args[1])
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())
