"""``forensics eval``: score diagnoses against labelled logs.

Reads collections laid out like ``../shared/corpora-real/dev``: ``{id}.log``
plus ``labels.csv`` (id, root_cause, phase, early_warning_substring,
fatal_substring, [verdict], [split], ...). Reports rules-only, classifier-only
and hybrid figures side by side when a model is available.
"""
from __future__ import annotations

import csv
import glob
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from forensics.pipeline import diagnose_source, load_classifier
from forensics.diagnosis.signatures import signature_set
from forensics.errors import InputError
from forensics.ingest.sources import Source


def read_labels(d: Path, split: str | None = None) -> list[dict[str, str]]:
    path = d / "labels.csv"
    if not path.exists():
        raise InputError(f"{d}: no labels.csv")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except csv.Error as e:
        raise InputError(f"{path}: not a CSV table ({e})") from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    if rows and "id" not in rows[0]:
        raise InputError(f"{path}: no 'id' column")
    out = []
    for r in rows:
        if split and r.get("split") and r["split"] != split:
            continue
        rid = r.get("id")
        # An id names a file in this directory, nothing else: no paths, no glob patterns.
        if not isinstance(rid, str) or not rid or len(rid) > 200 or rid in (".", "..") or \
                any(c in rid for c in "/\\\0"):
            continue
        log = d / f"{rid}.log"
        if not log.exists():
            cands = sorted(d.glob(f"{glob.escape(rid)}.*"))
            cands = [c for c in cands if c.suffix != ".csv"]
            if not cands:
                continue
            log = cands[0]
        r = dict(r)
        r["_path"] = str(log)
        out.append(r)
    return out


def _verdict_expected(row: dict[str, str]) -> str:
    if row.get("verdict"):
        return row["verdict"]
    return "failed" if row.get("root_cause") else "ready"


def labelled_dirs(dirs: list[Path]) -> list[Path]:
    """Each DIR as given, or, when it has no labels.csv but folders that do (``corpora/public``
    and its batches), those folders in name order."""
    from forensics.lab.public_corpus import batch_dirs

    out: list[Path] = []
    for d in dirs:
        found = batch_dirs(d) if not (d / "labels.csv").exists() and d.is_dir() else [d]
        if not found:
            raise InputError(f"{d}: no labels.csv, and no folder in it has one")
        out.extend(found)
    return out


GROUP_KEYS = ("server", "family", "label", "shape", "batch", "excerpt")


def group_of(row: dict[str, str], key: str) -> str:
    """The group a labelled row falls in for ``eval --by KEY``."""
    from forensics.lab.public_corpus import server_family

    if key == "label":
        return row.get("root_cause") or f"(healthy: {row.get('verdict') or 'ready'})"
    if key == "family":
        return server_family(row.get("server") or "?") if row.get("server") else "?"
    if key == "batch":
        return Path(row["_path"]).parent.name
    return row.get(key) or "?"


def evaluate_dirs(dirs: list[Path], use_classifier: bool = True, split: str | None = None,
                  model: str | None = None, by: tuple[str, ...] = ()) -> dict[str, Any]:
    """Score every labelled log in ``dirs`` (rows of ``split`` only, when given);
    ``model``: a classifier file instead of the shipped one (.skops allowed);
    ``by``: also score each group of rows (server, family, label, shape, batch)."""
    sset = signature_set()
    clf = load_classifier(use_classifier, model)
    rows: list[dict[str, Any]] = []
    unreadable: list[str] = []
    for d in labelled_dirs(dirs):
        for row in read_labels(d, split):
            src = Source(row["_path"], Path(row["_path"]))
            kept: list = []
            try:
                hybrid = (diagnose_source(src, sset=sset, classifier=clf, keep_incidents=kept)
                          if clf is not None else None)
                forced = (diagnose_source(Source(row["_path"], Path(row["_path"])), sset=sset, classifier=clf,
                                          always_classify=True) if clf is not None else None)
                rules = diagnose_source(Source(row["_path"], Path(row["_path"])), sset=sset, use_classifier=False,
                                        keep_incidents=kept if clf is None else None)
            except InputError as e:  # one unreadable log is reported, not a reason to lose the whole table
                unreadable.append(str(e))
                continue
            best = hybrid if clf is not None else rules
            # The live pass replays the log: only where a figure needs it (a healthy log's false
            # warnings, a labelled warning's live hit).
            needs_live = not row.get("root_cause") or bool(row.get("early_warning_substring"))
            live = _live_warnings(Path(row["_path"]), sset) if needs_live else []
            rows.append({"row": row, "rules": rules, "hybrid": hybrid, "forced": forced,
                         "linked_alone": _linked_alone(kept, best),
                         "live": len(live) if not row.get("root_cause") else 0,
                         "live_hit": _live_hit(row, live)})
    report = score(rows, clf is not None)
    report["unreadable"] = unreadable
    if by:
        report["by"] = {key: {g: summary(score(items, clf is not None))
                              for g, items in sorted(_grouped(rows, key).items())} for key in by}
    return report


def _grouped(items: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for it in items:
        out[group_of(it["row"], key)].append(it)
    return out


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The ledger's figures of one scored set (also one group of ``--by``)."""
    best = report["modes"].get("hybrid") or report["modes"]["rules"]
    ew = report["early_warnings"]
    return {
        "logs": report["n"], "failures": best["failures"], "healthy": best["healthy"],
        "top1": best["accuracy"], "correct": best["correct"],
        "evidence": report["evidence"], "phase": report["phase"],
        "early_warning": {"found": ew["found"], "live": ew.get("live", 0), "n": ew["n"],
                          "listed_per_failure": ew["mean_listed_per_failure"]},
        "not_called_failed": best["not_called_failed"], "healthy_called_failed": best["healthy_called_failed"],
        "live_per_healthy_log": report["live_warnings"]["per_healthy_log"],
        "healthy_verdict": report["healthy_verdicts"],
        "ece": best.get("ece"), "high_confidence": best["high_confidence"],
    }


def _linked_alone(incidents: list, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The early warnings that linking finds without precursor signatures."""
    from forensics.diagnosis.early_warnings import relink

    idx = result.get("incident")
    if result.get("verdict") != "failed" or idx is None or idx >= len(incidents):
        return []
    return relink(incidents[idx], use_signatures=False) or []


def _live_hit(row: dict[str, str], live: list[dict[str, Any]]) -> bool:
    """``watch`` printed the labelled early warning live, before the fatal line arrived."""
    early, fatal = row.get("early_warning_substring") or "", row.get("fatal_substring") or ""
    if not (row.get("root_cause") and early):
        return False
    lines = _raw_lines(row.get("_path"))
    fatal_at = next((i + 1 for i, t in enumerate(lines) if fatal and fatal in t), None)
    return any(evidence_names(early, [w], row.get("_path")) and (fatal_at is None or w["line"] < fatal_at)
               for w in live)


def _live_warnings(path: Path, sset: Any) -> list[dict[str, Any]]:
    """The early warnings ``watch`` would print live on this log, in order."""
    from forensics.diagnosis.diagnose import record_hits
    from forensics.diagnosis.early_warnings import live_early_warnings
    from forensics.events.parser import iter_source_events
    from forensics.incidents.lifetimes import IncidentBuilder

    builder = IncidentBuilder(str(path), record_hits(sset))
    announced: set[str] = set()
    cur = None
    out: list[dict[str, Any]] = []
    for ev in iter_source_events(Source(str(path), path)):
        for _ in builder.feed(ev):
            pass
        if builder.cur is not cur:
            cur, announced = builder.cur, set()
        out.extend(live_early_warnings(builder.cur, ev, announced))
    return out


def _modes(has_clf: bool) -> list[str]:
    return ["rules", "classifier", "hybrid"] if has_clf else ["rules"]


def _answer(item: dict[str, Any], mode: str) -> tuple[str | None, float | None, str]:
    if mode == "rules":
        r = item["rules"]
        return r.get("root_cause"), r.get("confidence"), r.get("verdict")
    if mode == "classifier":
        r = item["forced"]
        c = r.get("classifier") or {}
        return (c.get("label") if r.get("verdict") == "failed" else None), c.get("confidence"), r.get("verdict")
    r = item["hybrid"]
    return r.get("root_cause"), r.get("confidence"), r.get("verdict")


def _label_scores(per_label: dict[str, Counter]) -> tuple[dict[str, dict[str, Any]], list[float]]:
    """Precision, recall and F1 per true label (labels only ever predicted are left out)."""
    f1s = []
    labels = {}
    for label, c in sorted(per_label.items()):
        if c["support"] == 0:
            continue
        prec = c["tp"] / c["predicted"] if c["predicted"] else 0.0
        rec = c["tp"] / c["support"]
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        f1s.append(f1)
        labels[label] = {"precision": round(prec, 3), "recall": round(rec, 3), "f1": round(f1, 3), "support": c["support"]}
    return labels, f1s


def _score_mode(failures: list[dict[str, Any]], healthy: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """Accuracy, per-label figures, confusion and misses of one answering mode."""
    correct = 0
    conf_hi = conf_hi_ok = 0
    not_failed = 0
    calib: list[tuple[float, bool]] = []
    per_label: dict[str, Counter] = defaultdict(Counter)
    confusion: dict[str, Counter] = defaultdict(Counter)
    misses = []
    for it in failures:
        truth = it["row"]["root_cause"]
        pred, conf, verdict = _answer(it, mode)
        pred = pred or "none"
        ok = pred == truth
        correct += ok
        not_failed += verdict != "failed"
        if conf is not None and verdict == "failed":
            calib.append((float(conf), ok))
        per_label[truth]["support"] += 1
        per_label[truth]["tp"] += ok
        per_label[pred]["predicted"] += 1
        confusion[truth][pred] += 1
        if conf is not None and conf >= 0.9:
            conf_hi += 1
            conf_hi_ok += ok
        if not ok:
            misses.append({"source": it["row"]["_path"], "truth": truth, "pred": pred, "confidence": conf})
    labels, f1s = _label_scores(per_label)
    false_fail = sum(1 for it in healthy if _answer(it, mode)[2] == "failed")
    return {
        "accuracy": round(correct / len(failures), 4) if failures else None,
        "correct": correct, "failures": len(failures),
        "macro_f1": round(sum(f1s) / len(f1s), 4) if f1s else None,
        "per_label": labels,
        "confusion": {k: dict(v) for k, v in confusion.items()},
        "high_confidence": {"n": conf_hi, "correct": conf_hi_ok,
                            "precision": round(conf_hi_ok / conf_hi, 4) if conf_hi else None},
        "healthy": len(healthy), "healthy_called_failed": false_fail,
        "not_called_failed": not_failed,
        "ece": expected_calibration_error(calib),
        "misses": misses,
    }


def expected_calibration_error(pairs: list[tuple[float, bool]], bins: int = 10) -> float | None:
    """ECE: the gap between confidence and accuracy, averaged over equal-width
    confidence bins weighted by how many answers fall in each."""
    if not pairs:
        return None
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, ok) for c, ok in pairs if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if inside:
            gap = abs(sum(c for c, _ in inside) / len(inside) - sum(ok for _, ok in inside) / len(inside))
            total += gap * len(inside)
    return round(total / len(pairs), 4)


def evidence_names(fatal: str, evidence: list[dict[str, Any]], path: str | None) -> bool:
    """An evidence entry names the labelled fatal line: by its text, or by the
    line it points to (the text drops the envelope and the process prefix that
    a label may quote, e.g. ``(APIServer pid=N) OSError: ...``)."""
    if any(fatal in e["text"] for e in evidence):
        return True
    lines = _raw_lines(path)
    return any(isinstance(e.get("line"), int) and 0 < e["line"] <= len(lines) and fatal in lines[e["line"] - 1]
               for e in evidence)


@lru_cache(maxsize=4)
def _raw_lines(path: str | None) -> list[str]:
    """A log's raw lines (cached: the evidence checks and the live hit of one row read it several times)."""
    if not path:
        return []
    try:
        text = "".join(Source(name=path, path=Path(path)).blocks())
    except Exception:  # noqa: BLE001 - a log that cannot be read again just has no raw lines
        return []
    return text.split("\n")


def _count_row(n: Counter, it: dict[str, Any], res: dict[str, Any]) -> None:
    """Add one log's evidence, early-warning, phase and verdict hits to the counts."""
    row = it["row"]
    fatal = row.get("fatal_substring") or ""
    if row.get("root_cause") and fatal:
        n["ev_n"] += 1
        evidence = res.get("evidence") or []
        n["ev_hit"] += evidence_names(fatal, evidence, row.get("_path"))
        n["ev_first"] += evidence_names(fatal, evidence[:1], row.get("_path"))
    early = row.get("early_warning_substring") or ""
    if row.get("root_cause") and early:
        n["ew_n"] += 1
        # by its text or by the line it points to (a label may quote the line's prefix)
        hit = evidence_names(early, res.get("early_warnings") or [], row.get("_path"))
        alone = evidence_names(early, it.get("linked_alone") or [], row.get("_path"))
        n["ew_hit"] += hit
        n["ew_alone"] += alone
        n["ew_live"] += bool(it.get("live_hit"))
        if res.get("verdict") == "failed":
            n["ew_det"] += 1
            n["ew_det_hit"] += hit
            n["ew_det_alone"] += alone
    if row.get("root_cause") and res.get("verdict") == "failed":
        n["failed_n"] += 1
        n["listed"] += len(res.get("early_warnings") or [])
    if row.get("phase"):
        n["ph_n"] += 1
        got = res.get("phase") if row.get("root_cause") else (
            res.get("incidents")[-1].get("reached_phase") if res.get("incidents") else None)
        n["ph_ok"] += got == row["phase"]
    if not row.get("root_cause"):
        n["v_n"] += 1
        n["v_ok"] += res.get("verdict") == _verdict_expected(row)


def _rate(hit: int, n: int, digits: int = 4) -> float | None:
    return round(hit / n, digits) if n else None


def score(items: list[dict[str, Any]], has_clf: bool) -> dict[str, Any]:
    report: dict[str, Any] = {"n": len(items), "modes": {}}
    failures = [it for it in items if it["row"].get("root_cause")]
    healthy = [it for it in items if not it["row"].get("root_cause")]
    for mode in _modes(has_clf):
        report["modes"][mode] = _score_mode(failures, healthy, mode)
    best = "hybrid" if has_clf else "rules"
    n: Counter = Counter()
    for it in items:
        _count_row(n, it, it["hybrid"] if has_clf else it["rules"])
    report["evidence_hit_rate"] = _rate(n["ev_hit"], n["ev_n"])
    report["evidence"] = {"hit": n["ev_hit"], "first": n["ev_first"], "n": n["ev_n"]}
    report["early_warning_recall"] = _rate(n["ew_hit"], n["ew_n"])
    report["early_warnings"] = {"found": n["ew_hit"], "live": n["ew_live"], "n": n["ew_n"],
                                "found_by_linking_alone": n["ew_alone"],
                                "detected": n["ew_det"], "found_of_detected": n["ew_det_hit"],
                                "linking_alone_of_detected": n["ew_det_alone"],
                                "mean_listed_per_failure": _rate(n["listed"], n["failed_n"], 3)}
    report["early_warning_recall_linking_alone"] = _rate(n["ew_alone"], n["ew_n"])
    live = sum(it.get("live", 0) for it in healthy)
    report["live_warnings"] = {"healthy_logs": len(healthy), "false_live_warnings": live,
                               "per_healthy_log": round(live / len(healthy), 4) if healthy else None}
    report["phase_accuracy"] = _rate(n["ph_ok"], n["ph_n"])
    report["phase"] = {"correct": n["ph_ok"], "n": n["ph_n"]}
    report["healthy_verdicts"] = {"match": n["v_ok"], "n": n["v_n"]}
    report["decided_by"] = best
    return report


def render_report(report: dict[str, Any], show_misses: bool = False) -> str:
    lines = [f"{report['n']} logs"]
    modes = report["modes"]
    hdr = f"{'':24}" + "".join(f"{m:>12}" for m in modes)
    lines.append(hdr)

    def row(name: str, key: str, fmt: str = "{:.1%}") -> None:
        vals = []
        for m in modes.values():
            v = m.get(key)
            vals.append(fmt.format(v) if isinstance(v, (int, float)) else "-")
        lines.append(f"{name:<24}" + "".join(f"{v:>12}" for v in vals))

    row("top-1 accuracy", "accuracy")
    row("macro-F1", "macro_f1", "{:.3f}")
    lines.append(f"{'conf>=0.9 precision':<24}" + "".join(
        f"{(m['high_confidence']['precision'] if m['high_confidence']['precision'] is not None else float('nan')):>12.1%}"
        for m in modes.values()))
    lines.extend(_calibration_rows(modes))
    lines.append(f"{'healthy called failed':<24}" + "".join(
        f"{str(m['healthy_called_failed']) + '/' + str(m['healthy']):>12}" for m in modes.values()))
    for key, label in (("evidence", "evidence-line hit"), ("early_warnings", "early-warning recall"), ("phase", "phase accuracy")):
        d = report[key]
        num = d.get("hit", d.get("found", d.get("correct", 0)))
        pct = f"{num / d['n']:.1%}" if d["n"] else "-"
        lines.append(f"{label:<24}{pct:>12}  ({num}/{d['n']}, {report['decided_by']})")
    ev = report["evidence"]
    if ev["n"]:
        lines.append(f"{'evidence listed first':<24}{ev.get('first', 0) / ev['n']:>12.1%}  ({ev.get('first', 0)}/{ev['n']})")
    ew = report["early_warnings"]
    if ew["n"]:
        lines.append(f"{'  linking alone':<24}{ew['found_by_linking_alone'] / ew['n']:>12.1%}  "
                     f"({ew['found_by_linking_alone']}/{ew['n']}; of detected failures: with signatures "
                     f"{ew['found_of_detected']}/{ew['detected']}, linking alone {ew['linking_alone_of_detected']}/"
                     f"{ew['detected']})")
    if ew["n"]:
        lines.append(f"{'  printed live':<24}{ew.get('live', 0) / ew['n']:>12.1%}  ({ew.get('live', 0)}/{ew['n']}, "
                     "before the fatal line)")
    if ew.get("mean_listed_per_failure") is not None:
        lines.append(f"{'early warnings/failure':<24}{ew['mean_listed_per_failure']:>12.2f}")
    lw = report["live_warnings"]
    if lw["healthy_logs"]:
        lines.append(f"{'false live warnings':<24}{lw['per_healthy_log']:>12.3f}  per healthy log "
                     f"({lw['false_live_warnings']} on {lw['healthy_logs']})")
    hv = report["healthy_verdicts"]
    if hv["n"]:
        lines.append(f"{'healthy verdict match':<24}{hv['match'] / hv['n']:>12.1%}  ({hv['match']}/{hv['n']})")
    main = modes.get("hybrid") or modes["rules"]
    lines.append("per label (" + ("hybrid" if "hybrid" in modes else "rules") + "): " + ", ".join(
        f"{k} P{v['precision']:.2f}/R{v['recall']:.2f}" for k, v in main["per_label"].items()))
    for key, groups in (report.get("by") or {}).items():
        lines.append("")
        lines.append(render_groups(key, groups))
    if show_misses:
        for mname, m in modes.items():
            for miss in m["misses"]:
                lines.append(f"  miss[{mname}] {miss['source']}: truth {miss['truth']}, got {miss['pred']} ({miss['confidence']})")
    return "\n".join(lines)


def _calibration_rows(modes: dict[str, Any]) -> list[str]:
    """Failures not called failed and the calibration error, one column per mode."""
    return [f"{'not called failed':<24}" + "".join(
                f"{str(m.get('not_called_failed', 0)) + '/' + str(m['failures']):>12}" for m in modes.values()),
            f"{'calibration error (ECE)':<24}" + "".join(
                f"{m['ece']:>12.3f}" if m.get("ece") is not None else f"{'-':>12}" for m in modes.values())]


def _pct(num: int | None, n: int | None) -> str:
    return f"{num / n:.0%} ({num}/{n})" if n else "-"


def render_groups(key: str, groups: dict[str, dict[str, Any]]) -> str:
    """One row per group of ``eval --by KEY``: the ledger's figures."""
    head = (f"{'by ' + key:<26}{'logs':>5}{'top-1':>14}{'evidence':>14}{'phase':>14}{'EW found':>12}"
            f"{'EW live':>12}{'not failed':>11}{'healthy failed':>15}{'live/healthy':>13}")
    out = [head]
    for g, s in groups.items():
        ew = s["early_warning"]
        live = s["live_per_healthy_log"]
        out.append(f"{g[:25]:<26}{s['logs']:>5}{_pct(s['correct'], s['failures']):>14}"
                   f"{_pct(s['evidence']['hit'], s['evidence']['n']):>14}{_pct(s['phase']['correct'], s['phase']['n']):>14}"
                   f"{_pct(ew['found'], ew['n']):>12}{_pct(ew['live'], ew['n']):>12}"
                   f"{s['not_called_failed']:>11}{s['healthy_called_failed']:>15}"
                   f"{(f'{live:.2f}' if live is not None else '-'):>13}")
    return "\n".join(out)
