"""The healthy baseline silences a warning only where enough healthy start-ups printed it, and a
platform plugin's start-ups vouch only in their own context (issue 28 item 3)."""
from __future__ import annotations

from pathlib import Path

from forensics.lab.ew_baseline import MIN_HEALTHY_LOGS, assemble

NO_PLATFORM = "No platform detected, vLLM is running on UnspecifiedPlatform"
BELOW_SM80 = "Compute capability below sm80. Use float16 due to lack of bfloat16 support."


def _log(d: Path, name: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(f"{name}: a healthy start-up\n")
    return p


def _scan(log: Path, templates: set[str], server: str = "vllm", contexts: set[str] | None = None):
    return (log, server, templates, set(templates), set(), contexts or set())


def test_a_warning_two_healthy_logs_printed_still_warns(tmp_path):
    scans = [_scan(_log(tmp_path, f"{i:03d}.log"), {BELOW_SM80}, "sglang") for i in range(MIN_HEALTHY_LOGS - 1)]
    base = assemble(scans)
    assert BELOW_SM80 not in base["templates_by_server"].get("sglang", [])
    assert BELOW_SM80 not in base["shapes"]


def test_enough_healthy_logs_silence_it(tmp_path):
    scans = [_scan(_log(tmp_path, f"{i:03d}.log"), {BELOW_SM80}, "sglang") for i in range(MIN_HEALTHY_LOGS)]
    base = assemble(scans)
    assert BELOW_SM80 in base["templates_by_server"]["sglang"]
    assert base["min_healthy_logs"] == MIN_HEALTHY_LOGS


def test_a_good_run_of_a_pair_counts_alone(tmp_path):
    pair_dir = tmp_path / "pairs"
    good = _log(pair_dir, "good.log")
    (pair_dir / "pairs.csv").write_text("good,bad\ngood.log,bad.log\n")
    other = _log(tmp_path / "other", "001.log")
    assert BELOW_SM80 in assemble([_scan(good, {BELOW_SM80})])["templates_by_server"]["vllm"]
    assert BELOW_SM80 not in assemble([_scan(other, {BELOW_SM80})])["templates_by_server"].get("vllm", [])


def test_a_platform_plugins_logs_vouch_only_in_their_context(tmp_path):
    plugin = [_scan(_log(tmp_path, f"a{i}.log"), {NO_PLATFORM}, contexts={"plugin:platform"}) for i in range(5)]
    base = assemble(plugin + [_scan(_log(tmp_path, "cuda.log"), {NO_PLATFORM})])
    assert NO_PLATFORM not in base["templates_by_server"].get("vllm", [])
    assert NO_PLATFORM in base["templates_in_context"]["plugin:platform"]
