#!/usr/bin/env python3
"""Compare two rxeq JSON reports (rxeq.report/v1) case for case.

Usage: report_diff.py BEFORE.json AFTER.json

A case is keyed by (scenario, function, batch, executor); each side's
status, path, error and per-output metrics (ok, total, mismatches, max
abs, max rel, max ULP, their indices, near-ties, tolerance) must be the
same, and so must the set of cases and the lock results. Durations and
build paths are ignored. Exits 0 and prints "same: N cases, M locks" when
they agree, else prints every difference and exits 1. A structural check
of a refactoring: behaviour unchanged means the same report.
"""
import json
import sys

METRICS = ("name", "against", "tolerance", "ok", "total", "mismatches", "max_abs", "max_rel",
           "max_ulp", "max_abs_index", "max_rel_index", "worst_index", "near_ties", "problem")


def cases(report):
    out = {}
    for c in report.get("cases") or []:
        key = (c["scenario"], c["function"], c["batch"], c["executor"])
        out[key] = {
            "status": c.get("status"),
            "path": c.get("path"),
            "error": c.get("error"),
            "outputs": [{k: o.get(k) for k in METRICS} for o in c.get("outputs") or []],
        }
    return out


def locks(report):
    return {(l["scenario"], l["function"]): (l.get("status"), l.get("func")) for l in report.get("locks") or []}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        before = json.load(f)
    with open(argv[2]) as f:
        after = json.load(f)
    diffs = []
    cb, ca = cases(before), cases(after)
    for key in sorted(set(cb) | set(ca), key=str):
        if key not in ca:
            diffs.append(f"{'/'.join(map(str, key))}: only before")
        elif key not in cb:
            diffs.append(f"{'/'.join(map(str, key))}: only after")
        elif cb[key] != ca[key]:
            for field in ("status", "path", "error", "outputs"):
                if cb[key][field] != ca[key][field]:
                    diffs.append(f"{'/'.join(map(str, key))}: {field}: {cb[key][field]!r} -> {ca[key][field]!r}")
    lb, la = locks(before), locks(after)
    if lb != la:
        diffs.append(f"locks differ: {lb!r} -> {la!r}")
    for d in diffs:
        print(d)
    if diffs:
        return 1
    print(f"same: {len(ca)} cases, {len(la)} locks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
