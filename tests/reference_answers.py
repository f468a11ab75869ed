"""The normal path's answers of every corpus log, real set and seed, computed
once per test session and shared by the tests that compare them with another
path (the pure-Python core, the fallback matching engine, another hash seed)
or with the pinned digests: each of those once classified all ~4,700 logs on
the normal path itself, about a minute and a half of CPU apiece.

The first test that asks starts one background process (``python
tests/reference_answers.py OUT``, hash seed 1, this process's environment);
the test then runs its own path and only waits for the reference at the end,
so the computation overlaps the workers' own. pytest-xdist's workers are
processes: an exclusive ``flock`` on a file in the session's temporary folder,
inherited by the background process, says that it is under way.

The reference holds, per log key (``bench/answers.py``'s walk): the digest of
its full classify JSON (``answers.answer_digest``), "events:" + key the
digest of its ``parse`` NDJSON, and "pinned:" + key the digest of the fields
``tests/fixtures/answer-digests.json`` pins (``approved.pinned_digest``)."""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
HASH_SEED = "1"
NAME = "reference-answers"
WAIT_S = 3600  # a bound against a hung process only (at load 15-100 here it ran past 25 min)
_STARTED: list[subprocess.Popen] = []  # reaped in wait(), so its CPU time counts as this process's children's


def _paths(where: Path) -> tuple[Path, Path, Path]:
    where = where.resolve()  # (the background process runs in the repository)
    return where / f"{NAME}.json", where / f"{NAME}.lock", where / f"{NAME}.err"


def start(where: Path) -> None:
    """Start the background computation unless it is done or under way (any worker may call this)."""
    out, lock_path, err_path = _paths(where)
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another worker's process is computing it
        if out.exists() or err_path.exists():  # done (or failed: wait() reports it)
            return
        env = {**os.environ, "PYTHONHASHSEED": HASH_SEED,
               "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
        with open(err_path, "wb") as err:
            # The child inherits the locked descriptor: the lock is held until it exits.
            _STARTED.append(subprocess.Popen([sys.executable, str(Path(__file__)), str(out)], env=env, cwd=REPO,
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                             pass_fds=[lock.fileno()]))


def wait(where: Path) -> dict[str, Any]:
    """The reference ({"meta": ..., "answers": ...}), once the background process has written it."""
    out, lock_path, err_path = _paths(where)
    start(where)
    deadline = time.monotonic() + WAIT_S
    with open(lock_path, "a") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"the reference answers took over {WAIT_S} s ({err_path})") from None
                time.sleep(0.5)
    codes = [child.wait() for child in _STARTED]
    if not out.exists():
        said = err_path.read_text(errors="replace") if err_path.exists() else ""
        # a process killed from outside (the OOM killer: -9) leaves no word in its stderr
        how = f"exit status {codes[-1]}" if codes else "started by another worker"
        raise AssertionError(f"computing the reference answers failed ({how}, {err_path}): {said[-3000:]}")
    return json.loads(out.read_text())


def explain(keys: list[str], other_env: dict[str, str]) -> str:
    """A readable diff of the first differing log's answer: the normal path (this
    environment, hash seed 1) against the other one (``other_env`` over it)."""
    import difflib

    key = next((k for k in keys if not k.startswith(("events:", "pinned:"))), None)
    if key is None:
        return ""

    def shown(extra: dict[str, str]) -> list[str]:
        env = {**os.environ, "PYTHONHASHSEED": HASH_SEED, **extra}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        p = subprocess.run([sys.executable, str(REPO / "bench" / "answers.py"), "--show", key], env=env, cwd=REPO,
                           capture_output=True, text=True, timeout=300)
        return (p.stdout or p.stderr[-1000:]).splitlines()

    other = " ".join(f"{k}={v}" for k, v in other_env.items())
    diff = difflib.unified_diff(shown({}), shown(other_env), "normal", other, lineterm="", n=2)
    return f"\n{key}:\n" + "\n".join(list(diff)[:80])


def compute() -> dict[str, Any]:
    sys.path.insert(0, str(REPO / "bench"))
    import answers  # bench/answers.py

    import approved
    from forensics import native
    from forensics.diagnosis.signatures import signature_set

    got = answers.answers(events=True, also=lambda key, res: {f"pinned:{key}": approved.pinned_digest(res)})
    meta = {"core": native.core() + (f" ({native.WHY_PURE})" if native.WHY_PURE else ""),
            "engine": signature_set().engine, "hash_seed": os.environ.get("PYTHONHASHSEED")}
    return {"meta": meta, "answers": got}


def split(ref: dict[str, Any]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(full-answer digests, parse digests, pinned-field digests), each by log key."""
    full, events, pinned = {}, {}, {}
    for k, v in ref["answers"].items():
        if k.startswith("events:"):
            events[k.removeprefix("events:")] = v
        elif k.startswith("pinned:"):
            pinned[k.removeprefix("pinned:")] = v
        else:
            full[k] = v
    return full, events, pinned


if __name__ == "__main__":
    target = Path(sys.argv[1])
    doc = compute()
    tmp = target.with_suffix(".part")
    tmp.write_text(json.dumps(doc, sort_keys=True))
    tmp.replace(target)
