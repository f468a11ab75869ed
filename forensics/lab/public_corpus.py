"""The public real-log corpus (``corpora/public``): its rows, their checks, and its server families.

``python -m forensics.lab.public_corpus check [DIR ...]`` checks every row of every batch
(a folder with ``labels.csv``) under each DIR: legal label, verdict and phase values, the
fatal substring in its log, the early warning's first line before the fatal line, the
url not kept aside (``../shared/excluded_sources.py``, when it is there), every log with a
row and every row with its log. Exit 1 when a row fails, 2 on unreadable input.
"""
from __future__ import annotations

import csv
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from forensics.diagnosis.taxonomy import LABEL_SET, PHASES

PUBLIC_DIR = Path(__file__).resolve().parents[2] / "corpora" / "public"
COLUMNS = ("id", "verdict", "root_cause", "phase", "early_warning_substring", "fatal_substring",
           "url", "note", "server", "release", "shape", "excerpt")
SERVERS = frozenset({
    "sglang", "vllm", "vllm-rocm", "vllm-tpu", "vllm-ascend", "vllm-xpu", "vllm-cpu", "tgi", "lmdeploy",
    "tensorrt-llm", "triton", "ray", "xinference", "dynamo", "kserve", "llm-d", "aphrodite", "lorax", "nim",
})
SHAPES = frozenset({"journald", "docker", "compose", "kubectl", "slurm", "nohup", "ci", "console", "paste", "file"})
VERDICTS = frozenset({"failed", "ready", "starting"})
EXCERPT = frozenset({"whole", "excerpt"})
# Accelerator variants of one server are one family: holding out "vllm" must hold out vLLM on ROCm too,
# or the held-out score would be measured on logs whose twins were trained on.
_FAMILY_OF_VARIANT = {"vllm": "vllm"}


def server_family(server: str) -> str:
    """``vllm-rocm`` -> ``vllm``; ``other-gpustack`` -> ``other-gpustack``; ``llm-d`` stays itself."""
    head = server.split("-", 1)[0]
    return _FAMILY_OF_VARIANT.get(head, server)


def batch_dirs(root: Path) -> list[Path]:
    """The batch folders under ``root`` (``root`` itself when it holds a labels.csv), in name order."""
    if (root / "labels.csv").is_file():
        return [root]
    return sorted(p.parent for p in root.glob("*/labels.csv"))


@dataclass(frozen=True)
class RowProblem:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def _first_line_with(lines: list[str], needle: str) -> int | None:
    for i, line in enumerate(lines):
        if needle in line:
            return i
    return None


def check_row(row: dict[str, str], log_text: str, where: str) -> list[RowProblem]:
    """What is wrong with one row against its log (nothing: an empty list)."""
    out: list[RowProblem] = []

    def bad(what: str) -> None:
        out.append(RowProblem(where, what))

    missing = [c for c in COLUMNS if c not in row]
    if missing:
        bad(f"columns missing: {', '.join(missing)}")
        return out
    verdict, label, phase = row["verdict"], row["root_cause"], row["phase"]
    if verdict not in VERDICTS:
        bad(f"verdict {verdict!r} not one of {sorted(VERDICTS)}")
    if phase not in PHASES:
        bad(f"phase {phase!r} not a taxonomy phase")
    if verdict == "failed":
        if label not in LABEL_SET:
            bad(f"root_cause {label!r} not a taxonomy label")
        if not row["fatal_substring"]:
            bad("a failure without fatal_substring")
    elif label or row["fatal_substring"]:
        bad("a healthy log with a root_cause or fatal_substring")
    elif phase not in ("ready", "serving", "shutdown") and verdict == "ready":
        bad(f"verdict ready but phase {phase!r}")
    if row["server"] not in SERVERS and not (row["server"].startswith("other-") and len(row["server"]) > 6):
        bad(f"server {row['server']!r} not known (use other-<name>)")
    if row["shape"] not in SHAPES:
        bad(f"shape {row['shape']!r} not one of {sorted(SHAPES)}")
    if row["excerpt"] not in EXCERPT:
        bad(f"excerpt {row['excerpt']!r} not whole/excerpt")
    if not row["url"]:
        bad("no url")
    lines = log_text.splitlines()
    fatal_at = _first_line_with(lines, row["fatal_substring"]) if row["fatal_substring"] else None
    if row["fatal_substring"] and fatal_at is None:
        bad(f"fatal_substring not in the log: {row['fatal_substring']!r}")
    if row["early_warning_substring"]:
        ew_at = _first_line_with(lines, row["early_warning_substring"])
        if ew_at is None:
            bad(f"early_warning_substring not in the log: {row['early_warning_substring']!r}")
        elif fatal_at is not None and ew_at >= fatal_at:
            bad(f"early warning (line {ew_at + 1}) not before the fatal line (line {fatal_at + 1})")
    return out


def read_batch(d: Path) -> list[dict[str, str]]:
    with open(d / "labels.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def excluded_urls(urls: list[str], shared: Path) -> dict[str, str]:
    """url -> verdict for every url that ``excluded_sources.py`` does not call ``ok``."""
    script = shared / "excluded_sources.py"
    if not urls:
        return {}
    done = subprocess.run([sys.executable, str(script)], input="\n".join(urls) + "\n",
                          capture_output=True, text=True, check=False)
    out = {}
    for line in done.stdout.splitlines():
        verdict, _, url = line.partition("\t")
        if verdict != "ok":
            out[url.strip()] = verdict
    return out


def check_batches(roots: list[Path], shared: Path | None) -> list[RowProblem]:
    problems: list[RowProblem] = []
    urls: dict[str, str] = {}
    for root in roots:
        for d in batch_dirs(root):
            rows = read_batch(d)
            ids = [r.get("id", "") for r in rows]
            for dup in sorted({i for i in ids if ids.count(i) > 1}):
                problems.append(RowProblem(f"{d}", f"id {dup} twice"))
            for log in sorted(d.glob("*.log")):
                if log.stem not in ids:
                    problems.append(RowProblem(str(log), "a log without a row"))
            for r in rows:
                where = f"{d.name}/{r.get('id')}"
                log = d / f"{r.get('id')}.log"
                if not log.is_file():
                    problems.append(RowProblem(where, "a row without its log"))
                    continue
                text = log.read_text(encoding="utf-8", errors="replace")
                problems.extend(check_row(r, text, where))
                if r.get("url"):
                    urls[r["url"].split(" ")[0]] = where
    if shared is not None and (shared / "excluded_sources.py").is_file():
        for url, verdict in excluded_urls(sorted(urls), shared).items():
            problems.append(RowProblem(urls.get(url, url), f"url {verdict}: {url}"))
    return problems


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "check":
        print("usage: python -m forensics.lab.public_corpus check [DIR ...]", file=sys.stderr)
        return 2
    roots = [Path(a) for a in args[1:]] or [PUBLIC_DIR]
    for r in roots:
        if not r.is_dir():
            print(f"forensics: {r}: not a directory", file=sys.stderr)
            return 2
    shared = Path(__file__).resolve().parents[3] / "shared"
    problems = check_batches(roots, shared if shared.is_dir() else None)
    for p in problems:
        print(p)
    n = sum(len(read_batch(d)) for r in roots for d in batch_dirs(r))
    print(f"{n} rows checked, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())


def ledger_row(batch: Path, what: str = "") -> str:
    """The ledger row of a batch, from its ``first-look.json`` and the commit and time
    that ``first-look.txt``'s first line names (``measured at main <sha>, <time>``)."""
    import json
    import re

    report = json.loads((batch / "first-look.json").read_text(encoding="utf-8"))
    head = (batch / "first-look.txt").read_text(encoding="utf-8").splitlines()[0]
    m = re.search(r"measured at (?:main )?([0-9a-f]{7,40})", head)
    t = re.search(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)", head)
    sha = m.group(1)[:7] if m else "?"
    when = f"{t.group(1)} {t.group(2)}" if t else "?"
    best = report["modes"].get("hybrid") or report["modes"]["rules"]
    fails, healthy = best["failures"], best["healthy"]
    ev, ph, ew, lw = report["evidence"], report["phase"], report["early_warnings"], report["live_warnings"]

    def pct(num: int, n: int) -> str:
        return f"{num / n:.1%} ({num}/{n})" if n else "-"

    not_failed = best["not_called_failed"]
    live = f"{lw['per_healthy_log']:.3f} ({lw['false_live_warnings']}/{lw['healthy_logs']})" if lw["healthy_logs"] else "-"
    num = int(re.sub(r"\D", "", batch.name) or 0)
    return (f"| {when} | {sha} | {num}: `{batch.name}`{(' ' + what) if what else ''} | {report['n']} ({fails}/{healthy}) "
            f"| {pct(best['correct'], fails)} | {pct(ev['hit'], ev['n'])} | {pct(ph['correct'], ph['n'])} "
            f"| {pct(ew['found'], ew['n'])} | {not_failed}/{fails} | {best['healthy_called_failed']}/{healthy} | {live} |")
