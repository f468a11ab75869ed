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
