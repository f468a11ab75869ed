"""Early warnings held out by server family: what ``classify`` lists and what
``watch`` prints live, for each family scored with a healthy baseline that
never saw that family's healthy logs.

The parts of early-warning linking learned from data are the healthy baseline
(which warning templates healthy start-ups print, how rare each subject is) and
the listing model. A family's healthy logs in the baseline make its own
warnings look familiar, or its harmless lines look like news: scored in sample,
false live warnings are 0 by construction on the logs the baseline was built
from. Here each family (a public server family, or a project corpus) is scored
with the baseline rebuilt from the same collections without that family's
healthy logs, and with the shipped baseline beside it:

* ``found``: labelled warnings among the diagnosis's early warnings (retrospective recall);
* ``live``: labelled warnings ``watch`` printed before the fatal line arrived (live recall);
* ``per_failure``: warnings listed per failure (every failure of the family, labelled or not);
* ``false_live``: warnings ``watch`` printed on the family's healthy logs.

Precursor signatures are hand-written, not learned: the families that were read
while writing them are named in the README beside these figures.
``python -m forensics.lab.ew_train`` and ``forensics train`` print this report.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from forensics.lab.evaluate import _live_hit, _live_warnings, evidence_names, read_labels
from forensics.lab.public_corpus import PUBLIC_DIR, batch_dirs, server_family

REPO = Path(__file__).resolve().parents[2]
PROJECT = ("corpora/generated", "corpora/cpu", "corpora/gpu", "corpora/gpu-early-warning", "corpora/seeds")
FIGURES = ("labelled", "found", "live", "failures", "listed", "healthy", "false_live")


def group_of_dir(d: Path) -> str | None:
    """A project corpus is one group; a public batch's rows carry their family."""
    return None if d.resolve().parent == PUBLIC_DIR.resolve() else f"project:{d.name}"


def baseline_groups(dirs: list[Path]) -> dict[Path, str]:
    """The group of every healthy log the baseline is built from (``ew_baseline.healthy_logs``)."""
    from forensics.lab.ew_baseline import healthy_logs

    out: dict[Path, str] = {}
    for d in dirs:
        fixed = group_of_dir(d)
        servers = {} if fixed else {Path(r["_path"]).resolve(): r.get("server") or "?" for r in read_labels(d)}
        for log in healthy_logs([d]):
            out[log] = fixed or server_family(servers.get(log.resolve(), "?"))
    return out


def scored_rows(public: list[Path] | None = None,
                project: tuple[str, ...] = PROJECT) -> list[tuple[dict[str, str], str]]:
    """Every labelled row (failures and healthy logs) with its group: a public row's server
    family, ``project:<name>`` for a row of one of the ``project`` corpora."""
    out: list[tuple[dict[str, str], str]] = []
    for d in public if public is not None else batch_dirs(PUBLIC_DIR):
        out += [(r, server_family(r.get("server") or "?")) for r in read_labels(d)]
    for folder in project:
        d = REPO / folder
        if (d / "labels.csv").exists():
            out += [(r, f"project:{d.name}") for r in read_labels(d)]
    return out


def score_row(row: dict[str, str], sset: Any, clf: Any) -> dict[str, int]:
    """One log's figures under the baseline in force."""
    from forensics.ingest.sources import Source
    from forensics.pipeline import diagnose_source

    path = Path(row["_path"])
    got = dict.fromkeys(FIGURES, 0)
    if not row.get("root_cause"):
        got["healthy"] = 1
        got["false_live"] = len(_live_warnings(path, sset))
        return got
    res = diagnose_source(Source(str(path), path), sset=sset, classifier=clf)
    got["failures"] = 1
    got["listed"] = len(res.get("early_warnings") or [])
    warning = (row.get("early_warning_substring") or "").strip()
    if warning:
        got["labelled"] = 1
        got["found"] = int(evidence_names(warning, res.get("early_warnings") or [], row["_path"]))
        got["live"] = int(_live_hit(row, _live_warnings(path, sset)))
    return got


def _summary(counts: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = dict(counts)
    out["per_failure"] = round(counts["listed"] / counts["failures"], 3) if counts["failures"] else None
    out["false_live_per_healthy_log"] = round(counts["false_live"] / counts["healthy"], 4) if counts["healthy"] else None
    return out


def _add(total: dict[str, int], got: dict[str, int]) -> None:
    for k in FIGURES:
        total[k] = total.get(k, 0) + got[k]


def held_out_recall(public: list[Path] | None = None) -> dict[str, Any]:
    """Per group and overall: the figures with the baseline held out, and with the shipped one."""
    import json

    from forensics.diagnosis.early_warnings.baseline import BASELINE_PATH, HELD_OUT, from_data
    from forensics.diagnosis.signatures import signature_set
    from forensics.lab.ew_baseline import assemble, scan_all
    from forensics.pipeline import load_classifier

    shipped = json.loads(BASELINE_PATH.read_text(encoding="utf-8"))
    dirs = [REPO / s for s in shipped["sources"] if (REPO / s).is_dir()]
    groups_of = baseline_groups(dirs)
    scans = scan_all(list(groups_of))
    sset, clf = signature_set(), load_classifier(True)
    by_group: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row, group in scored_rows(public):
        by_group[group].append(row)
    per: dict[str, Any] = {}
    totals: dict[str, dict[str, int]] = {"held_out": {}, "shipped": {}}
    public_totals: dict[str, dict[str, int]] = {"held_out": {}, "shipped": {}}
    for group, rows in sorted(by_group.items()):
        kept = [s for s in scans if groups_of[s[0]] != group]
        base = from_data(assemble(kept))
        per[group] = {"baseline_logs": len(kept)}
        for mode, held in (("held_out", base), ("shipped", None)):
            token = HELD_OUT.set(held)
            try:
                counts = dict.fromkeys(FIGURES, 0)
                for row in rows:
                    _add(counts, score_row(row, sset, clf))
            finally:
                HELD_OUT.reset(token)
            per[group][mode] = _summary(counts)
            _add(totals[mode], counts)
            if not group.startswith("project:"):
                _add(public_totals[mode], counts)
    return {"groups": per, "overall": {m: _summary(c) for m, c in totals.items()},
            "overall_public": {m: _summary(c) for m, c in public_totals.items()}}
