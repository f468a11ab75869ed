"""Check every log against manifest.csv and write corpora/cpu/labels.csv.
A row is written only if its log exists, is < 100 KB, contains the
fatal_substring (and the early_warning_substring, when given, before it)."""
import collections
import csv
import os
import sys

COLS = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring",
        "provenance", "note", "verdict", "split"]


def main(manifest, out):
    rows = list(csv.DictReader(open(manifest)))
    ok, bad = [], []
    for r in rows:
        p = os.path.join(out, r["id"] + ".log")
        if not os.path.exists(p):
            bad.append((r["id"], "no log")); continue
        text = open(p, encoding="utf-8", errors="replace").read()
        if os.path.getsize(p) >= 100_000:
            bad.append((r["id"], "log >= 100 KB")); continue
        fi = text.find(r["fatal_substring"])
        if fi < 0:
            bad.append((r["id"], "fatal_substring not in log")); continue
        ew = r["early_warning_substring"]
        if ew and not (0 <= text.find(ew) < fi):
            bad.append((r["id"], "early warning missing or not before the failure")); continue
        if "unexpected: scenario did not fail" in text:
            bad.append((r["id"], "scenario did not fail")); continue
        ok.append(r)
    # stratified split: ~1/4 of each label to test, spread over the ids
    by = collections.defaultdict(list)
    for r in ok:
        by[r["root_cause"]].append(r)
    split = {}
    for lab, rs in by.items():
        rs.sort(key=lambda r: r["id"])
        n = len(rs)
        nt = max(1, round(n / 4)) if n > 1 else 0
        test_idx = {int((k + 0.75) * n / nt) for k in range(nt)} if nt else set()
        for i, r in enumerate(rs):
            split[r["id"]] = "test" if i in test_idx else "train"
    with open(os.path.join(out, "labels.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS)
        w.writeheader()
        for r in ok:
            w.writerow({
                "id": r["id"], "root_cause": r["root_cause"], "phase": r["phase"],
                "early_warning_substring": r["early_warning_substring"],
                "fatal_substring": r["fatal_substring"], "provenance": "reproduced",
                "note": f"corpora/reproduce/cpu/{r['script']} {r['variant']} ({r['style']}-style log); real failure on CPU host",
                "verdict": "failed", "split": split[r["id"]],
            })
    for i, why in bad:
        print(f"SKIPPED {i}: {why}", file=sys.stderr)
    c = collections.Counter((r["root_cause"], split[r["id"]]) for r in ok)
    for lab in sorted(by):
        print(f"{lab}: {c[(lab, 'train')]} train, {c[(lab, 'test')]} test", file=sys.stderr)
    print(f"{len(ok)} labelled, {len(bad)} skipped", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
