"""``python -m forensics.lab.ew_live_measure RH.json``: rules_holdout's live figures (labelled warnings
printed live before the fatal line, warnings printed live on healthy logs), each family read with its
own signatures held out as the given ``rules_holdout --json`` file lists them, without diagnosing: a
minute's check of a change to the live rules (rules_holdout takes 15-25). ``gained``/``lost``: the
labelled warnings whose live hit differs from the file's (``forensics.lab.ew_live_why`` says why one
stayed quiet)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def measure(data: dict[str, Any], sset: Any, only: set[str]) -> dict[str, Any]:
    """Live recall over every labelled warning and false live over every healthy log, each family
    read with its own signatures held out (``rules_holdout``'s live figures, without diagnosing):
    a quick check of a change to the live rules before rules_holdout measures it."""
    from forensics.lab.evaluate import _live_hit, _live_warnings
    from forensics.lab.rules_holdout import reduced_set

    out: dict[str, Any] = {"n": 0, "live": 0, "healthy": 0, "false_live": 0, "gained": [], "lost": [], "false": []}
    for fam in sorted(set(data["families"]) | set(data["healthy"])):
        if only and fam not in only:
            continue
        v = data["families"].get(fam, {})
        red = reduced_set(sset, {fam: set(v.get("own") or ())}, fam)
        for c in v.get("cases", ()):
            if "ew" not in c:
                continue
            row = dict(_label(c["path"]), _path=_local(c["path"]))
            hit = _live_hit(row, _live_warnings(Path(row["_path"]), red))
            out["n"] += 1
            out["live"] += int(hit)
            if hit != bool(c["ew_live"]):
                out["gained" if hit else "lost"].append(row["_path"])
        for h in data["healthy"].get(fam, {}).get("cases", ()):
            got = _live_warnings(Path(_local(h["path"])), red)
            out["healthy"] += 1
            out["false_live"] += len(got)
            out["false"].extend(f"{_local(h['path'])}:{w['line']}: {w['text'][:100]}" for w in got)
    return out


_LABELS: dict[str, dict[str, str]] = {}


def _local(path: str) -> str:
    """This checkout's copy of a public log (the JSON may name another checkout's path; run from the root)."""
    p = Path(path)
    return str(Path("corpora/public") / p.parent.name / p.name)


def _label(path: str) -> dict[str, str]:
    """The log's row of its batch's labels.csv (each file read once)."""
    import csv

    p = Path(_local(path))
    if f"{p.parent}/{p.stem}" not in _LABELS:
        with open(p.parent / "labels.csv", newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                _LABELS[f"{p.parent}/{row['id']}"] = row
    return _LABELS[f"{p.parent}/{p.stem}"]


def main(argv: list[str] | None = None) -> int:
    from forensics.diagnosis.signatures import signature_set

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("holdout_json", help="a rules_holdout --json file (each family's own signatures, its cases)")
    ap.add_argument("--only", default="", help="families, comma-separated")
    args = ap.parse_args(argv)
    data = json.loads(Path(args.holdout_json).read_text(encoding="utf-8"))
    got = measure(data, signature_set(), set(filter(None, args.only.split(","))))
    for k in ("gained", "lost", "false"):
        print(f"{k}:", *got[k], sep="\n  ")
    print(f"live {got['live']}/{got['n']}, false live {got['false_live']} on {got['healthy']} healthy logs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
