#!/usr/bin/env python3
"""The table of a bench/cluster.sh run: python3 bench/cluster_table.py OUT_DIR.

Reads each point's `triad bench` JSON (rtt<R>-n<N>.json) and its nodes' /metrics
(rtt<R>-n<N>-node<K>.metrics), prints a Markdown table, and writes summary.json beside
them. Throughput is given as a ratio to the 1-node point of the same RTT. The lock's
figures are summed over the nodes from each metric's _sum and _count (whole point, warmup
included): a batch's commands, its commit, and, when the server exports them, the cluster
lock's wait and hold times.
"""

import json
import pathlib
import re
import sys
from collections import defaultdict

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
POINT = re.compile(r"^rtt(?P<rtt>[0-9.]+)-n(?P<n>\d+)\.json$")
# A game's commands besides its moves: the challenge and its acceptance.
COMMANDS_PER_GAME_BESIDES_MOVES = 2


def metric_sums(paths):
    """Each metric family's _sum and _count, added over the files (one per node)."""
    totals = defaultdict(float)
    for path in paths:
        for line in path.read_text().splitlines():
            if not line or line.startswith("#"):
                continue
            if 'quantile="' in line or 'le="' in line:
                continue
            name = NAME.match(line).group(0)
            if name.endswith("_sum") or name.endswith("_count"):
                totals[name] += float(line.rsplit(" ", 1)[1])
    return totals


def mean(totals, family):
    count = totals.get(family + "_count", 0.0)
    return totals[family + "_sum"] / count if count else None


def cpu_ms_per_game(path, games):
    """CPU per game of the point's parts, from its .cpu file (ticks before and after the
    run, warmup included, as the metrics are): the nodes together, PostgreSQL, the delay
    proxies, one follower (a node no client uses, FOLLOWERS), and the rest of the machine
    (the load generator, the kernel's network)."""
    if not path.exists() or not games:
        return None
    before, after = (
        [kv.split("=") for kv in line.split()] for line in path.read_text().splitlines()[:2]
    )
    tick = float(dict(after)["tick"])

    def spent(part):
        return sum(float(v) for k, v in after if k == part) - sum(
            float(v) for k, v in before if k == part
        )

    parts = {
        part: spent(part) for part in ("node", "postgres", "proxies", "follower", "machine")
    }
    parts["rest"] = parts["machine"] - sum(
        parts[p] for p in ("node", "postgres", "proxies", "follower")
    )
    followers = sum(1 for k, _ in after if k == "follower")
    per_game = {part: ticks / tick * 1e3 / games for part, ticks in parts.items()}
    per_game["follower"] = per_game["follower"] / followers if followers else None
    per_game["machine_s"] = parts["machine"] / tick
    return per_game


def lock_families(totals):
    """The lock's histograms, whatever the server calls them: names with `lock` in them."""
    return sorted(
        {k[: -len("_count")] for k in totals if k.endswith("_count") and "lock" in k}
    )


def main(out):
    out = pathlib.Path(out)
    points = []
    for path in sorted(out.iterdir()):
        m = POINT.match(path.name)
        if not m:
            continue
        report = json.loads(path.read_text())
        p = report["series"][0]["points"][0]
        totals = metric_sums(sorted(out.glob(f"rtt{m['rtt']}-n{m['n']}-node*.metrics")))
        commands = p["moves"] + COMMANDS_PER_GAME_BESIDES_MOVES * p["games_ok"]
        batch_commands = mean(totals, "triad_commit_batch_commands")
        # The whole `triad bench` run, warmup included, as the metrics are.
        start, end = (float(t) for t in (out / f"rtt{m['rtt']}-n{m['n']}.span").read_text().split())
        span_s = end - start
        hold_s = totals.get("triad_cluster_lock_hold_seconds_sum")
        holds = totals.get("triad_cluster_lock_hold_seconds_count")
        committed = totals.get("triad_commit_batch_commands_sum")
        batches = totals.get("triad_commit_batch_commands_count")
        point = {
            "rtt_ms": float(m["rtt"]),
            "nodes": int(m["n"]),
            "games_ok": p["games_ok"],
            "games_failed": p["games_failed"] + p["warmup_failed"],
            "games_per_s": p["games_per_s"],
            "moves_per_s": p["moves_per_s"],
            "commands_per_s": commands / p["wall_s"] if p["wall_s"] else None,
            "move_p50_ms": p["move_latency_ms"]["p50"],
            "move_p99_ms": p["move_latency_ms"]["p99"],
            "batches": batches,
            "commands_per_batch": batch_commands,
            "commit_ms": (mean(totals, "triad_commit_seconds") or 0) * 1e3,
            "span_s": span_s,
            "moves_per_command": p["moves"] / commands if commands else None,
            # The share of the run during which some node held the lock (1.0: saturated),
            # and the commands each hold carried, empty holds (a tick with nothing due)
            # included: the ceiling is commands_per_hold / mean hold.
            "lock_busy": hold_s / span_s if hold_s is not None else None,
            "holds_per_s": holds / span_s if holds else None,
            "commands_per_hold": committed / holds if holds and committed else None,
            "ceiling_commands_per_s": (committed / hold_s) if hold_s and committed else None,
            # The lock held per batch, in ms: t(RTT, b) of the capacity model.
            "lock_ms_per_batch": hold_s / batches * 1e3 if hold_s is not None and batches else None,
            # Over the whole run, warmup included: CPU ms per game of each part.
            "cpu_ms_per_game": cpu_ms_per_game(
                out / f"rtt{m['rtt']}-n{m['n']}.cpu", p["games_ok"] + p["warmup_ok"]
            ),
            # Times in ms, sizes as they are.
            "lock": {
                f: mean(totals, f) * (1e3 if f.endswith("seconds") else 1)
                for f in lock_families(totals)
                if mean(totals, f) is not None
            },
        }
        points.append(point)
    points.sort(key=lambda q: (q["rtt_ms"], q["nodes"]))
    one = {q["rtt_ms"]: q for q in points if q["nodes"] == 1}
    for q in points:
        base = one.get(q["rtt_ms"])
        q["games_per_s_vs_1_node"] = (
            q["games_per_s"] / base["games_per_s"] if base and base["games_per_s"] else None
        )
    (out / "summary.json").write_text(json.dumps(points, indent=2) + "\n")

    families = sorted({f for q in points for f in q["lock"]})
    head = [
        "RTT ms", "nodes", "games/s", "× 1 node", "moves/s", "move p50 ms", "move p99 ms",
        "commands/batch", "commit ms", "lock ms/batch", "lock busy", "ceiling commands/s",
    ] + [
        f.removeprefix("triad_").replace("_seconds", " ms") for f in families
    ] + ["failed"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    fmt = lambda v, d=1: "–" if v is None else f"{v:,.{d}f}"
    for q in points:
        row = [
            fmt(q["rtt_ms"], 1), str(q["nodes"]), fmt(q["games_per_s"]),
            fmt(q["games_per_s_vs_1_node"], 2), fmt(q["moves_per_s"], 0),
            fmt(q["move_p50_ms"]), fmt(q["move_p99_ms"]), fmt(q["commands_per_batch"], 2),
            fmt(q["commit_ms"], 2), fmt(q["lock_ms_per_batch"], 2), fmt(q["lock_busy"], 2),
            fmt(q["ceiling_commands_per_s"], 0),
        ] + [fmt(q["lock"].get(f), 2) for f in families] + [str(q["games_failed"])]
        print("| " + " | ".join(row) + " |")

    costed = [q for q in points if q["cpu_ms_per_game"]]
    if costed:
        print()
        followed = any(q["cpu_ms_per_game"]["follower"] is not None for q in costed)
        parts = ["node", "postgres", "proxies"] + (["follower"] if followed else [])
        head = ["RTT ms", "nodes", "nodes' CPU ms/game", "PostgreSQL", "proxies"] + (
            ["a follower"] if followed else []
        ) + ["rest (load generator, kernel)", "machine", "machine cores busy"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---:|" * len(head))
        for q in costed:
            c = q["cpu_ms_per_game"]
            busy = c["machine_s"] / q["span_s"]
            row = [fmt(q["rtt_ms"], 1), str(q["nodes"])] + [
                fmt(c[k], 2) for k in parts + ["rest", "machine"]
            ] + [fmt(busy, 2)]
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
