"""Benchmark: the exact matcher against exhaustive search on chains and wide DAGs.

    python benchmarks/bench_matcher.py            # full table (about half a minute)
    python benchmarks/bench_matcher.py --quick    # smaller sizes

Problems imitate real scoring tables: "message" milestones are non-zero only at some messages (tool
replies, agent texts), "state" milestones are constant between world changes and measured against
their first predecessor (like `added` rows), and every milestone with predecessors carries
guardrails on the world version. The near-tie variant makes every message a candidate with
similarities within 1e-6 of each other — nothing can be compressed and bounds prune nothing.
The exhaustive search (tests/benchmarks/exhaustive.py) runs only while size**milestones stays small.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_toolsandbox.evaluation.matcher import Guard, MatchProblem, Term, align
from tests.benchmarks.exhaustive import exhaustive_align

EXHAUSTIVE_LIMIT = 150_000
"""Largest number of assignments the exhaustive search is run on."""


def edges_of(shape: str, count: int) -> list[tuple[int, int]]:
    """chain: 0→1→…; wide: 0 → {1..count-2} → count-1 (a fan-out and a join)."""
    if shape == "chain" or count < 3:
        return [(m, m + 1) for m in range(count - 1)]
    middle = range(1, count - 1)
    return [(0, m) for m in middle] + [(m, count - 1) for m in middle]


def make_problem(shape: str, count: int, size: int, near_ties: bool, seed: int = 0) -> MatchProblem:
    rng = np.random.default_rng(seed)
    versions = np.cumsum(rng.random(size) < 0.12)
    edges = edges_of(shape, count)
    terms, guards = [], []
    for m in range(count):
        preds = tuple(u for u, v in edges if v == m)
        if near_ties:
            own = 1.0 - rng.random(size) * 1e-6
        elif m % 2 == 0:  # message milestone: a few candidate messages
            own = np.where(rng.random(size) < 0.15, rng.choice([0.5, 0.8, 1.0], size), 0.0)
        else:  # state milestone: constant per world version
            own = rng.choice([0.0, 0.6, 1.0], versions.max() + 1)[versions]
        if preds and m % 2 == 1:
            by_version = rng.choice([0.0, 0.5, 1.0], (versions.max() + 1,) * 2)
            table = own[:, None] * (by_version[np.ix_(versions, versions)] if not near_ties
                                    else 1.0 - rng.random((size, size)) * 1e-6)
            terms.append(Term(table, preds[:1]))
        else:
            terms.append(Term(own))
        guards.append(Guard(versions.astype(np.int64), preds))
    return MatchProblem(size, tuple(terms), tuple(guards), tuple(edges))


def _timed(function, problem: MatchProblem) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(problem)
    return time.perf_counter() - start, result


def _row(shape: str, count: int, size: int, near_ties: bool) -> dict[str, object]:
    problem = make_problem(shape, count, size, near_ties)
    fast_time, fast = _timed(align, problem)
    assignments = size ** count
    row: dict[str, object] = {"shape": shape, "ties": "near" if near_ties else "sparse", "M": count, "N": size,
                              "matcher": fast_time, "exhaustive": None, "agree": ""}
    if assignments <= EXHAUSTIVE_LIMIT:
        slow_time, slow = _timed(exhaustive_align, problem)
        row["exhaustive"] = slow_time
        row["agree"] = "yes" if slow == fast else "NO"
    else:
        row["agree"] = f"({assignments:.1e} assignments)"
    return row


def _ms(value: object) -> str:
    return "—" if value is None else f"{1000 * float(value):9.1f}"


def _print_table(rows: list[dict[str, object]]) -> None:
    print(f"{'shape':<6} {'ties':<6} {'M':>3} {'N':>4} {'matcher ms':>11} {'exhaustive ms':>14}  same answer")
    for row in rows:
        print(f"{row['shape']:<6} {row['ties']:<6} {row['M']:>3} {row['N']:>4} {_ms(row['matcher']):>11} "
              f"{_ms(row['exhaustive']):>14}  {row['agree']}")


def _exponent(rows: list[dict[str, object]], key: str, axis: str) -> str:
    """Least-squares slope of log(time) against log(axis): the empirical polynomial degree."""
    points = [(math.log(float(r[axis])), math.log(float(r[key]))) for r in rows if r[key] is not None]
    if len(points) < 2:
        return "n/a"
    xs, ys = zip(*points, strict=True)
    return f"{np.polyfit(xs, ys, 1)[0]:.2f}"


def _factor(rows: list[dict[str, object]], key: str) -> str:
    """exp(slope of log(time) against M): the growth factor per extra milestone."""
    points = [(float(r["M"]), math.log(float(r[key]))) for r in rows if r[key] is not None and int(r["M"]) >= 2]
    if len(points) < 2:
        return "n/a"
    xs, ys = zip(*points, strict=True)
    return f"{math.exp(np.polyfit(xs, ys, 1)[0]):.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args(argv)
    sizes = (10, 25, 50, 100) if args.quick else (10, 25, 50, 100, 200)
    counts = (1, 2, 3, 4, 5, 6, 9, 12) if not args.quick else (1, 2, 3, 4, 8)
    rows = []
    for shape in ("chain", "wide"):
        for near_ties in (False, True):
            for count in counts:
                for size in sizes:
                    rows.append(_row(shape, count, size, near_ties))
    _print_table(rows)
    print("\ngrowth (slope of log time vs log N; exhaustive is N**M):")
    largest = max(counts)
    for shape in ("chain", "wide"):
        for ties in ("sparse", "near"):
            line = [r for r in rows if r["shape"] == shape and r["ties"] == ties and r["M"] == largest]
            small = [r for r in rows if r["shape"] == shape and r["ties"] == ties and r["M"] == 2]
            print(f"  {shape:<5} {ties:<6} matcher M={largest}: N^{_exponent(line, 'matcher', 'N')}   "
                  f"exhaustive M=2: N^{_exponent(small, 'exhaustive', 'N')}")
    print("growth (slope of log time vs M at the largest N; exhaustive grows like N**M, i.e. exponentially):")
    for shape in ("chain", "wide"):
        for ties in ("sparse", "near"):
            line = [r for r in rows if r["shape"] == shape and r["ties"] == ties and r["N"] == max(sizes)]
            print(f"  {shape:<5} {ties:<6} matcher N={max(sizes)}: M^{_exponent(line, 'matcher', 'M')}")
    print("growth per added milestone at N=10 (factor by which time multiplies):")
    for shape in ("chain", "wide"):
        for ties in ("sparse", "near"):
            line = [r for r in rows if r["shape"] == shape and r["ties"] == ties and r["N"] == 10]
            print(f"  {shape:<5} {ties:<6} matcher ×{_factor(line, 'matcher')}   "
                  f"exhaustive ×{_factor(line, 'exhaustive')}")
    worst = max((r for r in rows if r["N"] == max(sizes) and r["M"] == largest), key=lambda r: float(r["matcher"]))
    print(f"\nlargest case: {worst['shape']} {worst['ties']} M={worst['M']} N={worst['N']}: "
          f"{1000 * float(worst['matcher']):.0f} ms")
    return 0 if all(r["agree"] != "NO" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
