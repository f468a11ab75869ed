"""Times of a log: years from rollover, file mtime or journalctl's header; short times in the
given zone."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import CORPORA, REPO, run_cli
from helpers import classify_json, one_line_error


# ---------------------------------------------------------------- time
ROLLOVER = """\
Dec 31 23:58:00 node systemd[1]: Started sglang.service - SGLang server.
Dec 31 23:58:01 node python3[42]: server_args=ServerArgs(model_path='x')
Dec 31 23:59:58 node python3[42]: Load weight begin.
Jan 01 00:01:05 node python3[42]: Traceback (most recent call last):
Jan 01 00:01:05 node python3[42]:   File "/x.py", line 1, in <module>
Jan 01 00:01:05 node python3[42]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
Jan 01 00:01:10 node systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE
"""


def test_year_rollover_at_new_year(tmp_path):
    p = tmp_path / "newyear.log"
    p.write_text(ROLLOVER)
    os.utime(p, (1799000000, 1799000000))  # written 2027-01-03: the log ran 2026-12-31 -> 2027-01-01
    _, (res,) = classify_json("--tz", "UTC", str(p))
    assert res["duration_s"] == pytest.approx(190.0)
    assert res["time_to_failure_s"] == pytest.approx(185.0)
    assert res["incidents"][0]["start_ts"] == "2026-12-31T23:58:00+00:00"
    assert res["incidents"][0]["end_ts"] == "2027-01-01T00:01:10+00:00"


def test_year_comes_from_the_file_mtime_when_the_log_has_none(tmp_path):
    p = tmp_path / "old.log"
    p.write_text(ROLLOVER.replace("Dec 31", "Mar 14").replace("Jan 01", "Mar 15"))
    os.utime(p, (1520000000, 1520000000))  # 2018-03-02: a March log written then is from 2017
    _, (res,) = classify_json("--tz", "UTC", str(p))
    assert res["incidents"][0]["start_ts"].startswith("2017-03-14")
    os.utime(p, (1553000000, 1553000000))  # 2019-03-19
    _, (res,) = classify_json("--tz", "UTC", str(p))
    assert res["incidents"][0]["start_ts"].startswith("2019-03-14")


def test_year_from_journalctl_header(tmp_path):
    p = tmp_path / "header.log"
    p.write_text("-- Logs begin at Thu 2015-12-31 10:00:00 UTC, end at Fri 2016-01-01 00:01:10 UTC. --\n" + ROLLOVER)
    _, (res,) = classify_json("--tz", "UTC", str(p))
    assert res["incidents"][0]["start_ts"] == "2015-12-31T23:58:00+00:00"
    assert res["duration_s"] == pytest.approx(190.0)


def test_short_times_are_local_times_of_the_tz(tmp_path):
    p = tmp_path / "local.log"
    p.write_text(ROLLOVER)
    os.utime(p, (1799000000, 1799000000))
    _, (ny,) = classify_json("--tz", "America/New_York", str(p))
    assert ny["incidents"][0]["start_ts"] == "2027-01-01T04:58:00+00:00"  # EST is UTC-5
    assert ny["duration_s"] == pytest.approx(190.0)
    env_tz = subprocess.run([sys.executable, "-m", "forensics", "classify", "--format", "json", str(p)],
                            capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO), TZ="Asia/Tokyo"))
    assert json.loads(env_tz.stdout)["incidents"][0]["start_ts"] == "2026-12-31T14:58:00+00:00"
    one_line_error(run_cli("classify", "--tz", "Mars/Olympus", str(p)), "unknown time zone")
    # Times that carry their zone are not moved by --tz.
    iso = CORPORA / "journald" / "fixture.short-iso.log"
    _, (a,) = classify_json("--tz", "UTC", str(iso))
    _, (b,) = classify_json("--tz", "Asia/Tokyo", str(iso))
    assert a["incidents"][0]["start_ts"] == b["incidents"][0]["start_ts"]


# ------------------------------------------------- a zone-less clock beside a zoned one
# Dynamo's Rust frontend prints UTC ("...Z"); the vLLM worker it starts prints the
# wall clock of its machine (here IST, UTC+05:30) without a zone.
DYNAMO_VLLM = """\
2025-03-27T13:39:28.695813Z  INFO dynamo_runtime::distributed: Initializing distributed runtime etcd_endpoints=["http://localhost:2379"]
2025-03-27T13:39:29.102455Z  INFO dynamo_runtime::component: Registering endpoint generate namespace="dynamo" component="VllmWorker"
INFO 03-27 19:09:32 [__init__.py:256] Automatically detected platform cuda.
INFO 03-27 19:09:35 [config.py:585] This model supports multiple tasks: {'generate', 'embed'}. Defaulting to 'generate'.
INFO 03-27 19:10:41 [gpu_model_runner.py:1128] Model loading took 14.9889 GiB and 52.614571 seconds
INFO 03-27 19:10:58 [core.py:138] init engine (profile, create kv cache, warmup model) took 16.95 seconds
INFO 03-27 19:11:00 [api_server.py:1028] Starting vLLM API server on http://0.0.0.0:8000
INFO:     Application startup complete.
"""


def _ts(text: str) -> list[str]:
    from forensics import parse

    return [e.ts.isoformat() for e in parse(text) if e.ts is not None]


def test_a_zone_less_clock_is_read_in_the_zone_a_zoned_clock_beside_it_shows(tmp_path):
    from forensics.events.parser import plan_source

    assert plan_source(list(enumerate(DYNAMO_VLLM.splitlines(), 1))).offset == 330
    ts = _ts(DYNAMO_VLLM)
    assert ts[1:3] == ["2025-03-27T13:39:29.102455+00:00", "2025-03-27T13:39:32+00:00"]
    p = tmp_path / "dynamo.log"
    p.write_text(DYNAMO_VLLM)
    _, (res,) = classify_json(str(p))
    assert res["duration_s"] == pytest.approx(91.3, abs=0.1)  # was 5 h 31 min
    # --tz wins: the user says the zone-less clock is UTC (or IST: the same answer as inferred).
    _, (utc,) = classify_json("--tz", "UTC", str(p))
    assert utc["duration_s"] == pytest.approx(19891.3, abs=0.1)
    _, (ist,) = classify_json("--tz", "Asia/Kolkata", str(p))
    assert ist["duration_s"] == pytest.approx(91.3, abs=0.1)


def test_a_watched_log_reads_the_zone_less_clock_in_the_inferred_zone_from_the_first_lines():
    proc = run_cli("watch", "--stall-timeout", "5", input=DYNAMO_VLLM.encode())
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "(72s into the log)" in out and "(89s into the log)" in out, out


def test_one_clock_or_a_zone_less_clock_that_is_utc_moves_nothing():
    from forensics.events.parser import plan_source

    vllm_only = "".join(ln + "\n" for ln in DYNAMO_VLLM.splitlines()[2:])
    assert plan_source(list(enumerate(vllm_only.splitlines(), 1))).offset is None
    assert _ts(vllm_only)[0].endswith("-03-27T19:09:32+00:00")  # no year in the log: this year
    utc = DYNAMO_VLLM.replace("03-27 19:09:", "03-27 13:39:").replace("03-27 19:1", "03-27 13:4")
    assert plan_source(list(enumerate(utc.splitlines(), 1))).offset == 0
    assert _ts(utc)[2] == "2025-03-27T13:39:32+00:00"
    # Not a zone: a naive stamp a day off its zoned neighbour decides nothing.
    far = DYNAMO_VLLM.replace("03-27 19:", "03-28 19:")
    assert plan_source(list(enumerate(far.splitlines(), 1))).offset is None


def test_syslog_times_follow_the_zone_a_zoned_message_stamp_shows(tmp_path):
    log = ("Mar 27 19:09:28 gpu1 dynamo[812]: 2025-03-27T13:39:28.695813Z  INFO dynamo_runtime::distributed: "
           "Initializing distributed runtime\n"
           "Mar 27 19:09:32 gpu1 dynamo[812]: INFO 03-27 19:09:32 [__init__.py:256] Automatically detected platform cuda.\n")
    p = tmp_path / "sys.log"
    p.write_text(log)
    proc = run_cli("parse", str(p))
    ts = [json.loads(ln)["ts"] for ln in proc.stdout.decode().splitlines()]
    assert ts == ["2025-03-27T13:39:28+00:00", "2025-03-27T13:39:32+00:00"]
