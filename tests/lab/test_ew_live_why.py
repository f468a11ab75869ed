"""Why a labelled early warning was not printed live, decided by code (``forensics.lab.ew_live_why``)."""
from __future__ import annotations

from forensics.diagnosis.signatures import signature_set
from forensics.lab import ew_live_why

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


def _row(tmp_path, lines: list[str], early: str) -> dict:
    log = tmp_path / "a.log"
    log.write_text("\n".join(lines) + "\n")
    return {"_path": str(log), "root_cause": "gpu.out-of-memory", "early_warning_substring": early,
            "fatal_substring": "CUDA out of memory"}


def test_a_live_warning_and_the_first_step_that_kept_one_quiet(tmp_path):
    sset = signature_set()
    # llama.cpp's parameter fit projecting more than the host has: the arithmetic prints it live
    over = "common_params_fit_impl: projected to use 3645 MiB of host memory vs. 2973 MiB of total host memory"
    assert ew_live_why.replay(_row(tmp_path, ["INFO starting", over, OOM], "projected to use 3645 MiB"),
                              sset)["bucket"] == "live"
    # an INFO line with no wording class: the general rules never read it
    got = ew_live_why.replay(_row(tmp_path, ["INFO starting", "INFO Using KV cache dtype: fp8", OOM],
                                  "Using KV cache dtype"), sset)
    assert got["bucket"] == "general: no warning level and no wording class" and got["line"] == 2
    # the labelled line came after the fatal one: too late to warn (printed or not)
    got = ew_live_why.replay(_row(tmp_path, ["INFO starting", "ERROR " + OOM, "INFO 2 shutting down",
                                             "WARNING 3 low free GPU memory"], "low free GPU memory"), sset)
    assert got["bucket"] == "printed at or after the fatal line"  # (memory-shortfall wording: watch prints it)


def test_the_report_keeps_the_aside_families_to_figures():
    rows = [{"family": "vllm", "path": "public/batch-01/001.log", "aside": True, "warning": "w", "bucket": "live"},
            {"family": "vllm", "path": "public/batch-01/002.log", "aside": True, "warning": "secret line",
             "bucket": "general: no live cue", "line": 3, "text": "secret line"},
            {"family": "sglang", "path": "public/batch-02/001.log", "aside": False, "warning": "w",
             "bucket": "general: no live cue", "line": 4, "text": "studied line"}]
    out = ew_live_why.render({"rows": rows, "held_baseline": False})
    assert "studied: 1 labelled, live 0" in out and "aside: 2 labelled, live 1" in out
    assert "studied line" in out and "secret line" not in out
