"""Each labelled early warning with its family's own signatures held out (``forensics.lab.ew_misses``)."""
from __future__ import annotations

from forensics.lab import ew_misses


def _row(family: str, seen: tuple[int, int], held: tuple[int, int]) -> dict:
    return {"family": family, "path": f"public/batch-01/{family}.log", "root_cause": "gpu.out-of-memory",
            "warning": "Available KV cache memory: -1.81 GiB", "lost": ["vllm.negative-kv-cache-memory"],
            "seen": {"found": seen[0], "live": seen[1]},
            "held_out": {"found": held[0], "live": held[1], "label": "gpu.out-of-memory",
                         "listed": [{"line": 3, "text": "Available KV cache memory: -1.81 GiB", "signature": None,
                                     "score": 4.7, "why": "the memory left is -1.81 GiB"}],
                         "live_lines": []}}


def test_the_report_totals_each_family_and_lists_lines_unless_summarised():
    out = {"rows": [_row("vllm", (1, 1), (1, 0)), _row("vllm", (1, 0), (0, 0)), _row("tgi", (1, 1), (1, 1))],
           "healthy": {"vllm": [45, 1], "tgi": [17, 0]}, "held_baseline": False}
    full = ew_misses.render(out, summary=False)
    assert "found 1->1 live 1->0" in full and "listed 3:" in full
    summary = ew_misses.render(out, summary=True)
    assert "listed" not in summary and "warning:" not in summary
    vllm = next(line for line in summary.splitlines() if line.startswith("vllm"))
    assert vllm.split()[1:] == ["2", "2", "1", "1", "0", "1/45"]
    assert summary.splitlines()[-1].split()[1:] == ["3", "3", "2", "2", "1", "1/62"]


def test_an_unwritable_json_path_is_refused_before_the_run(tmp_path, capsys):
    assert ew_misses.main(["--json", str(tmp_path / "missing" / "rows.json")]) == 2
    assert capsys.readouterr().err.startswith("forensics: --json ")


def test_why_a_labelled_warning_was_missed(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("INFO pipeline parallelism enabled (n_copies=4)\nWARNING low free memory\nERROR out of memory\n")
    row = {"_path": str(log), "early_warning_substring": "pipeline parallelism enabled"}
    failed = {"verdict": "failed", "incident": 0, "incidents": [{"index": 0, "start_line": 1, "end_line": 3}],
              "evidence": [{"line": 3, "text": "ERROR out of memory"}]}
    assert ew_misses.why_missed(row, None, []) == "not called failed"
    assert ew_misses.why_missed(row, failed, []).startswith("no candidate")
    cand = {"line": 1, "text": "INFO pipeline parallelism enabled (n_copies=4)", "score": 1.0}
    assert ew_misses.why_missed(row, failed, [cand]) == "candidate under the bar"
    assert ew_misses.why_missed(row, failed, [dict(cand, score=3.0)]) == "over the bar, ranked out by the cap"
    later = dict(failed, incidents=[{"index": 0, "start_line": 2, "end_line": 3}])
    assert ew_misses.why_missed(row, later, []) == "in another lifetime"
    first = dict(failed, evidence=[{"line": 1, "text": "x"}])
    first["evidence"][0]["line"] = 0
    assert ew_misses.why_missed(row, first, []) == "after the failure's first evidence line"
    evidence = dict(failed, evidence=[{"line": 1, "text": "INFO pipeline parallelism enabled (n_copies=4)"}])
    assert ew_misses.why_missed(row, evidence, []) == "the failure's own evidence line"
