"""The text report and the wording people read: short, readable, no false precision, colour
only when asked."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import forensics

from conftest import CORPORA, REPO, run_cli


SEEDS = CORPORA / "seeds"


def test_text_report_is_readable():
    p = run_cli("classify", str(SEEDS / "seed1.short.log"))
    out = p.stdout.decode()
    assert p.returncode == 1
    assert "FAILED" in out and "env.module-missing" in out and "early warnings" in out and "try:" in out
    assert len(out.splitlines()) < 30


EXAMPLE = REPO / "examples" / "sglang-b300-flash-attn-cute.log"


def test_durations_for_people():
    from forensics.report.text import human_duration, render_text

    assert [human_duration(s) for s in (None, 0.0, 4.25, 45, 125, 7260, 86400, 90061)] == \
        ["unknown", "0 s", "4.2 s", "45 s", "2 min 5 s", "2 h 1 min", "1 d 0 h", "1 d 1 h"]
    res = forensics.classify(EXAMPLE)
    text = render_text(res)
    assert "failed 9 min 51 s after the log's first line" in text and "(1 min 43 s before)" in text
    no_times = forensics.classify_text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert "time of failure unknown (no timestamps)" in render_text(no_times)


def test_rule_matches_are_not_printed_as_probabilities():
    from forensics.report.text import render_text

    res = forensics.classify(EXAMPLE)
    assert res["decided_by"] == "signature"
    head = render_text(res).splitlines()[0]
    assert "%" not in head and "sure" not in head and "(matched a rule)" in head
    clf = dict(res, decided_by="classifier", confidence=0.873)
    assert "(classifier probability 87%)" in render_text(clf).splitlines()[0]


# ---------------------------------------------------------------- colour
def _colour_run(args: list[str], **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    proc = subprocess.run([sys.executable, "-m", "forensics", "classify", *args, str(EXAMPLE)], capture_output=True,
                          env={**base, "PYTHONPATH": str(REPO), **env})
    return proc.stdout.decode()


def test_colour_follows_the_flag_and_the_environment_in_pipes():
    esc = "\x1b["
    assert esc in _colour_run(["--color", "always"])  # a pipe, and still coloured
    assert esc not in _colour_run([])  # auto: not a terminal
    assert esc not in _colour_run(["--color", "never"], FORCE_COLOR="1")
    assert esc in _colour_run([], FORCE_COLOR="1")
    assert esc not in _colour_run([], FORCE_COLOR="1", NO_COLOR="1")
    assert esc in _colour_run(["--color", "always"], NO_COLOR="1")  # the explicit flag wins
    assert esc not in _colour_run(["--no-color"], FORCE_COLOR="1")


def test_want_color_on_a_terminal():
    from forensics.cli.options import want_color

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert want_color("auto", Tty(), {}) is True
    assert want_color("auto", Tty(), {"TERM": "dumb"}) is False
    assert want_color("auto", Tty(), {"NO_COLOR": "1"}) is False
    assert want_color("auto", io.StringIO(), {"FORCE_COLOR": "0"}) is False


# ---------------------------------------------------------------- evidence text
def test_evidence_text_is_the_message_alone():
    from forensics.diagnosis.result import evidence_text

    assert evidence_text("  | 2025-11-04 10:07:58.273395 master-0 >> [rank1]: RuntimeError: CUDA error: "
                         "an illegal memory access was encountered |  ") == \
        "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered"
    assert evidence_text("[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] Watchdog caught "
                         "collective operation timeout\x1b[0m") == \
        "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] Watchdog caught collective operation timeout"
    assert evidence_text("ImportError: libfoo.so: cannot open") == "ImportError: libfoo.so: cannot open"


def test_a_bracket_before_an_m_is_text_not_a_lost_colour_code():
    # vLLM's logger names, hosts and notes start with "[m": only "[m" before a bracket, space,
    # colon or the end is a reset whose ESC byte was lost.
    from forensics.diagnosis.result import evidence_text
    from forensics.envelope.clean import clean_message

    line = "INFO 10-28 11:50:13 [model_runner.py:1054] Loading model on [0] done"
    assert clean_message(line) == line
    assert evidence_text("[c10d] recvValue failed on SocketImpl(fd=25, addr=[mac.lan]:53759)") == \
        "[c10d] recvValue failed on SocketImpl(fd=25, addr=[mac.lan]:53759)"
    assert evidence_text("In message [msg 9502], the server crashed") == "In message [msg 9502], the server crashed"
    assert evidence_text("[1mWARNING[m: low memory [0m") == "WARNING: low memory"


def test_evidence_of_a_console_paste_and_a_ray_log(tmp_path):
    console = "".join(f"  |   | 2025-11-04 10:07:58.2734{i:02d} master-0 >> {ln} |  \n" for i, ln in enumerate([
        "[rank1]:[E1104 10:07:58.664587143 ProcessGroupNCCL.cpp:2068] [PG ID 2 PG GUID 3 Rank 1] Process group "
        "watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]))
    ray = ("[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
           "operation timeout: WorkNCCL(SeqNum=158046, OpType=GATHER, NumelIn=2867200, NumelOut=0, "
           "Timeout(ms)=600000) ran for 600027 milliseconds before timing out.\n"
           "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 1] Timeout at NCCL work: "
           "158046, last enqueued NCCL work: 158046, last completed NCCL work: 158045.\n")
    for text in (console, ray):
        res = forensics.classify_text(text)
        assert res["verdict"] == "failed" and res["evidence"]
        for inc in [res, *res["incidents"]]:
            for e in inc["evidence"] + inc["early_warnings"]:
                assert ">>" not in e["text"] and "[36m" not in e["text"] and "\x1b" not in e["text"], e
                assert not e["text"].startswith(("|", " ")) and not e["text"].endswith("|"), e
