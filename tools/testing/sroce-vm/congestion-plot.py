#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The congestion scenario's curves: rate over time, one flow and two.

Usage: tools/testing/sroce-vm/congestion-plot.py RESULTS-DIR [PNG]

RESULTS-DIR is what scenarios/congestion.sh wrote
(<run>/<kernel>/congestion/results/): rate-RUN.csv (each flow's goodput
per interval) and dcqcn-RUN.csv (the sroce:sroce_dcqcn tracepoint: the
reaction point's rate after every cut and increase) for the runs
defaults, cc-on, cc-off and two, and congestion-summary.txt for the
bottleneck's rate. One panel per run: each flow's goodput as steps, its
DCQCN rate (rc) as a thin line, the bottleneck as a dashed line. PNG
defaults to RESULTS-DIR/congestion.png. Like scripts/bench-report.py it
draws with matplotlib (python3-matplotlib, which scripts/setup.sh
installs) and says so when it is missing.

Exit: 0, 1 if a CSV is missing, 2 on usage errors.
"""

import csv
import re
import sys
from pathlib import Path

RUNS = (
    ("defaults", "one flow, congestion control defaults"),
    ("cc-on", "one flow, parameters scaled to the bottleneck"),
    ("cc-off", "one flow, rp_enable=0 on the sender"),
    ("two", "two flows, scaled parameters"),
)
COLOURS = ("tab:blue", "tab:orange")


def read_csv(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def bottleneck(res):
    text = (res / "congestion-summary.txt").read_text()
    m = re.search(r"bottleneck (\d+) Mbit/s", text)
    return float(m.group(1)) if m else None


def per_flow(rows, key):
    flows = {}
    for r in rows:
        flows.setdefault(r["flow"], ([], []))
        flows[r["flow"]][0].append(float(r["t_s"]))
        flows[r["flow"]][1].append(float(r[key]))
    return flows


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    res = Path(argv[1])
    png = Path(argv[2]) if len(argv) == 3 else res / "congestion.png"
    try:
        rate = {run: read_csv(res / f"rate-{run}.csv") for run, _ in RUNS}
        dcqcn = {run: read_csv(res / f"dcqcn-{run}.csv") for run, _ in RUNS}
        limit = bottleneck(res)
    except OSError as e:
        print(f"congestion-plot: {e}", file=sys.stderr)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("congestion-plot: no matplotlib (python3-matplotlib): no chart",
              file=sys.stderr)
        return 0
    fig, axes = plt.subplots(len(RUNS), 1, figsize=(10, 3 * len(RUNS)),
                             sharex=True)
    top = 3 * limit if limit else None
    for ax, (run, title) in zip(axes, RUNS):
        for i, (flow, (t, v)) in enumerate(sorted(per_flow(rate[run], "mbit_s").items())):
            ax.step(t, v, where="post", color=COLOURS[i % 2], linewidth=2,
                    label=f"flow {flow} goodput")
        for i, (flow, (t, v)) in enumerate(sorted(per_flow(dcqcn[run], "rc_mbit_s").items())):
            ax.plot(t, v, color=COLOURS[i % 2], linewidth=0.5, alpha=0.6,
                    label=f"flow {flow} DCQCN rate")
        if limit:
            ax.axhline(limit, color="black", linestyle="--", linewidth=1,
                       label=f"bottleneck {limit:.0f} Mbit/s")
            ax.set_ylim(0, top)
        ax.set_title(title)
        ax.set_ylabel("Mbit/s")
        ax.legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("seconds from the start of the run")
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    print(f"congestion-plot: chart {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
