"""Envelopes: journald modes and JSON, syslog escapes, Kubernetes CRI partial lines, docker
and console wrappers, multi-line journal messages."""
from __future__ import annotations

from forensics import parse
from forensics.api import to_sources
from forensics.events.parser import iter_source_events

from conftest import CORPORA
from helpers import traceback_lines as _traceback_lines


def _events(path_or_text):
    return list(parse(path_or_text))


def test_line_accounting_and_journald_fixture_modes():
    for path in sorted((CORPORA / "journald").glob("fixture.*.log")):
        holder = []
        src = to_sources(path)[0]
        evs = list(iter_source_events(src, parser_out=holder))
        st = holder[0].stats
        data = path.read_bytes()
        physical = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        assert st.lines == physical, path.name
        assert st.parsed + st.unparsed == st.lines
        assert evs and max(e.line for e in evs) <= st.lines


def test_journald_json_decodes_byte_arrays_and_nulls():
    evs = _events(CORPORA / "journald" / "fixture.json.log")
    texts = [e.text for e in evs]
    # ANSI-coloured uvicorn line arrives as a byte array; decoded and stripped
    assert any(t.startswith("INFO:") or "Started server process" in t for t in texts)
    assert any(e.kind == "blob" for e in evs)  # MESSAGE null (>= 4096 bytes)
    assert any(e.kind == "journal_marker" and e.data["marker"] == "boot" for e in evs)


def test_syslog_escaped_newlines_become_lines():
    t = ('May 30 14:47:53 host python[1]: Traceback (most recent call last):#012  File "/a/b.py", line 3, in f'
         '#012    x()#012RuntimeError: boom#012\n')
    tbs = [e for e in _events(t) if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "RuntimeError" and len(tbs[0].data["frames"]) == 1


def test_kubernetes_cri_partial_lines_are_joined():
    t = ("2025-07-25T07:53:08.217Z stderr F Traceback (most recent call last):\n"
         '2025-07-25T07:53:08.218Z stderr F   File "/a/b.py", line 3, in f\n'
         "2025-07-25T07:53:08.218Z stderr P RuntimeError: CUDA error: an illegal mem\n"
         "2025-07-25T07:53:08.219Z stderr F ory access was encountered\n")
    tbs = [e for e in _events(t) if e.kind == "traceback"]
    assert len(tbs) == 1
    assert tbs[0].data["exc_message"] == "CUDA error: an illegal memory access was encountered"


def test_docker_compose_and_console_wrappers():
    compose = "\n".join(f"sglang-1  | {x}" for x in _traceback_lines(0)) + "\n"
    tbs = [e for e in _events(compose) if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "torch.OutOfMemoryError" and tbs[0].rank == "TP0"
    boxed = "\n".join(f"│ {x:<160} │" for x in _traceback_lines(1)) + "\n"
    tbs = [e for e in _events(boxed) if e.kind == "traceback"]
    assert len(tbs) == 1 and len(tbs[0].data["frames"]) == 2


def test_docker_json_file_lines():
    import json as _json
    recs = [{"log": x + "\n", "stream": "stderr", "time": f"2025-06-01T12:00:0{i}.123456789Z"}
            for i, x in enumerate(_traceback_lines(2))]
    evs = _events("\n".join(_json.dumps(r) for r in recs) + "\n")
    tbs = [e for e in evs if e.kind == "traceback"]
    assert len(tbs) == 1 and tbs[0].data["exc_type"] == "torch.OutOfMemoryError"
    assert tbs[0].ts is not None and tbs[0].ts.year == 2025 and tbs[0].ident == "stderr"


def test_multiline_journal_message_stays_one_message():
    for name in ("fixture.short.log", "fixture.short-iso-precise.log", "fixture.json.log", "fixture.export.log"):
        evs = _events(CORPORA / "journald" / name)
        pre = [e for e in evs if e.text.startswith("GPU preflight OK")]
        assert len(pre) == 2, name  # two runs print it
        assert pre[0].text.count("\n") == 3 and "GPU1: NVIDIA H100" in pre[0].text, name
        assert not any(e.text.lstrip().startswith("GPU0: NVIDIA") for e in evs), name
    short = [e for e in _events(CORPORA / "journald" / "fixture.short.log") if e.text.startswith("GPU preflight OK")]
    assert short[0].end_line == short[0].line + 3


def test_a_forced_journal_mode_never_drops_the_lines_it_cannot_read():
    """`--input-format export` (or `verbose`) on a log that is not one: every line is kept as text, so the
    seed's failure is still found; before, each non-field line was dropped and the answer was 'the input is
    empty' about 953 lines it had not read."""
    from forensics import classify

    seed = CORPORA / "seeds" / "seed1.short.log"
    for fmt in ("export", "verbose"):
        res = classify(str(seed), input_format=fmt)
        assert res["verdict"] == "failed" and res["root_cause"] == "env.module-missing", (fmt, res["summary"])
    real = classify(str(CORPORA / "seeds" / "seed1.export-input"))  # a real export still reads as one
    assert real["root_cause"] == "env.module-missing" and real["time_to_failure_s"]


# A journal coloured from its first byte, as ccze or a coloured terminal capture prints it.
COLOURED = (
    "\x1b[32mMay 30 14:38:02 gpu3 sglang[123]: [2025-05-30 14:38:02] server_args=ServerArgs(model_path='x')\x1b[0m\n"
    "\x1b[32mMay 30 14:38:40 gpu3 sglang[123]: [2025-05-30 14:38:40 TP0] Load weight end. type=LlamaForCausalLM, "
    "dtype=torch.bfloat16, avail mem=61.32 GB\x1b[0m\n"
    "\x1b[1;31mMay 30 14:38:41 gpu3 sglang[123]: [2025-05-30 14:38:41 TP0] Scheduler hit an exception: "
    "torch.OutOfMemoryError: CUDA out of memory.\x1b[0m\n"
    # ccze colours each column
    "\x1b[1m\x1b[34mMay 30 14:38:42\x1b[0m \x1b[1m\x1b[35mgpu3\x1b[0m \x1b[33msystemd\x1b[0m[\x1b[1m1\x1b[0m]: "
    "sglang.service: Main process exited, code=exited, status=1/FAILURE\n"
)


def test_lines_coloured_from_their_first_byte_are_read_as_their_envelope():
    from forensics.envelope.sniff import detect_format

    assert detect_format(COLOURED.splitlines()) == "short+sgr"
    assert detect_format([ln.replace("\x1b[32m", "") for ln in COLOURED.splitlines()[:2]]) == "short"
    evs = _events(COLOURED)
    assert [(e.host, e.ident) for e in evs] == [("gpu3", "sglang")] * 3 + [("gpu3", "systemd")]
    assert all(e.ts is not None and e.ts.minute == 38 for e in evs)
    assert "\x1b" not in evs[2].text and evs[2].text.endswith("CUDA out of memory.")
    assert evs[3].pid == 1 and evs[3].text.startswith("sglang.service: Main process exited")
