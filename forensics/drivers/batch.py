"""The engine of ``forensics batch``: diagnose many logs in parallel, one row per incident.

Files are found with ``expand_paths`` (directories walked, ``.gz`` read
transparently) and diagnosed one per task, in a process pool (``--jobs N``)
or on a dask.distributed cluster (``--engine dask``). Workers return plain
rows, never DataFrames, so the wire stays small and both engines build the
very same table (``forensics.report.frames.INCIDENT_COLUMNS``), sorted by
source then incident whatever finished first.

A file that cannot be read becomes one row with ``error`` set; the run goes
on. The table's ``attrs`` carry ``files`` (how many were tried) and
``lines`` (how many lines were read).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from forensics.errors import ForensicsError, InputError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from forensics.ingest.sources import Source

ENGINES = ("processes", "dask")

# Per-process cache: the signature set and model load once per worker, not per file.
_STATE: dict[tuple[str, bool], tuple[Any, Any]] = {}


def _diagnosis_tools(use_classifier: bool) -> tuple[Any, Any]:
    key = ("tools", use_classifier)
    if key not in _STATE:
        from forensics.pipeline import load_classifier
        from forensics.diagnosis.signatures import signature_set

        _STATE[key] = (signature_set(), load_classifier(use_classifier))
    return _STATE[key]


def diagnose_file(path: "str | Source", input_format: str = "auto",
                  use_classifier: bool = True) -> tuple[list[dict[str, Any]], int]:
    """Diagnose one file (a path, or a ``Source``: an archive member) -> (incident
    rows, lines read). Never raises for a bad file: an unreadable one (or one
    the diagnosis trips over) is one error row."""
    from forensics.pipeline import diagnose_source
    from forensics.ingest.sources import Source
    from forensics.report.frames import incident_rows

    src = Source(path, Path(path)) if isinstance(path, str) else path
    path = src.name
    try:
        sset, clf = _diagnosis_tools(use_classifier)
        result = diagnose_source(src, input_format, sset=sset, classifier=clf)
    except ForensicsError as e:
        return incident_rows({"source": path, "error": str(e), "stats": {"lines": src.stats.lines}}), src.stats.lines
    except OSError as e:
        msg = f"cannot read {path}: {e.strerror or e}"
        return incident_rows({"source": path, "error": msg, "stats": {"lines": src.stats.lines}}), src.stats.lines
    except Exception as e:  # noqa: BLE001
        # A bug or a pathological input must not end a run over months of logs;
        # the row says what happened so it can be reported.
        msg = f"internal error while diagnosing {path}: {type(e).__name__}: {e}"
        return incident_rows({"source": path, "error": msg, "stats": {"lines": src.stats.lines}}), src.stats.lines
    lines = int((result.get("stats") or {}).get("lines") or 0)
    return incident_rows(result), lines


def _diagnose_task(args: tuple["Source", str, bool]) -> tuple[str, list[dict[str, Any]], int]:
    src, input_format, use_classifier = args
    rows, lines = diagnose_file(src, input_format, use_classifier)
    return src.name, rows, lines


def collect_files(paths: Iterable[str]) -> tuple[list["Source"], list[dict[str, Any]]]:
    """Expand arguments into sources (files, archive members); files inside
    directories or archives that cannot be read become error rows."""
    from forensics.ingest.sources import expand_paths

    files: list[Source] = []
    errors: list[dict[str, Any]] = []
    for p in paths:
        p = str(p)
        if p == "-":
            raise InputError("batch reads files and directories, not stdin (-)")
        skipped: list[str] = []
        # A path named on the command line that is missing, or a directory with
        # nothing to read, is a usage error (exit 2) before any work: a typo
        # must not come back as "no failure". Bad files inside a directory
        # become error rows and the run goes on.
        for src in expand_paths([p], skipped):
            files.append(src)
        for s in skipped:
            name, _, why = s.partition(": ")
            errors.append({"source": name, "error": f"cannot read {name}: {why or 'unreadable directory'}"})
    # A file named twice (``logs/ logs/a.log``) is diagnosed once.
    seen: set[str] = set()
    unique = [f for f in files if not (f.name in seen or seen.add(f.name))]  # type: ignore[func-returns-value]
    return unique, errors


class _Progress:
    """tqdm on stderr, counting files (rate, ETA) and lines; silent off a terminal."""

    def __init__(self, total: int, enabled: bool | None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.bar = None
        self.lines = 0
        self.t0 = time.monotonic()
        if enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="file", file=sys.stderr, dynamic_ncols=True, leave=False,
                            desc="forensics batch")

    def update(self, lines: int) -> None:
        self.lines += lines
        if self.bar is not None:
            rate = self.lines / max(time.monotonic() - self.t0, 1e-6)
            self.bar.set_postfix_str(f"{self.lines:,} lines, {rate:,.0f} lines/s", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_processes(tasks: list[tuple["Source", str, bool]], jobs: int, on_done: Callable[[tuple], None]) -> None:
    if jobs <= 1 or len(tasks) <= 1:
        for t in tasks:
            on_done(_diagnose_task(t))
        return
    import multiprocessing
    import threading
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # fork is cheapest (workers inherit the loaded modules and signatures) and
    # safe while this process runs a single thread; otherwise (a notebook
    # kernel, a dask client) take the platform's default start method.
    single = threading.active_count() == 1
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork") if single and "fork" in methods and sys.platform == "linux" else None
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx, initializer=_worker_init)
    try:
        pending = {pool.submit(_diagnose_task, t) for t in tasks}
        while pending:
            # Wake up now and then: a signal caught by a helper thread only
            # reaches Python (SIGTERM -> KeyboardInterrupt) when this thread runs.
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            for fut in done:
                on_done(fut.result())
    except BaseException:
        # Ctrl-C / SIGTERM: stop now rather than finish the queue. Workers ignore
        # SIGINT (Ctrl-C reaches the whole process group), so end them here.
        _terminate_workers(pool)  # before shutdown(), which forgets the processes
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt means
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # like SIGTERM: the parent cleans up


def _terminate_workers(pool: Any) -> None:
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        try:
            terminate()
        except Exception:
            pass
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except Exception:
            pass


def _run_dask(tasks: list[tuple["Source", str, bool]], jobs: int | None, scheduler: str | None,
              on_done: Callable[[tuple], None]) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ForensicsError("--engine dask needs the 'batch' extra (dask.distributed is not installed): "
                             "pip install 'forensics[batch]'") from None
    import logging

    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as e:
                raise ForensicsError(f"cannot reach the dask scheduler at {scheduler}: {e}") from None
        else:
            cluster = LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        try:
            if tasks:
                futures = client.map(_diagnose_task, tasks, pure=False)
                for fut in as_completed(futures):
                    on_done(fut.result())
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def run_batch(paths: Sequence[str], jobs: int | None = None, engine: str = "processes",
              scheduler: str | None = None, progress: bool | None = None, input_format: str = "auto",
              use_classifier: bool = True) -> "pd.DataFrame":
    """Diagnose every log under ``paths``; one row per incident
    (``forensics.report.frames.INCIDENT_COLUMNS``), sorted by source, incident.

    ``jobs``: worker processes (default ``os.cpu_count()``; with dask, the
    size of the local cluster). ``engine``: ``processes`` or ``dask``
    (``scheduler``: address of a running dask scheduler, else a LocalCluster;
    its workers need ``forensics`` installed). ``progress``: a bar on stderr;
    ``None`` shows it only when stderr is a terminal."""
    from forensics.report.frames import rows_frame

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; use one of: {', '.join(ENGINES)}")
    if jobs is not None and jobs < 1:
        raise InputError("--jobs must be at least 1")
    if scheduler and engine != "dask":
        raise InputError("--scheduler needs --engine dask")
    files, rows = collect_files(paths)
    tasks = [(f, input_format, use_classifier) for f in files]
    if engine == "processes":
        # load once here (forked workers inherit it); a refused model ends the run now
        _diagnosis_tools(use_classifier)
    bar = _Progress(len(tasks), progress)
    total_lines = 0

    def on_done(item: tuple[str, list[dict[str, Any]], int]) -> None:
        nonlocal total_lines
        _, file_rows, lines = item
        rows.extend(file_rows)
        total_lines += lines
        bar.update(lines)

    try:
        if engine == "dask":
            _run_dask(tasks, jobs, scheduler, on_done)
        else:
            _run_processes(tasks, jobs or os.cpu_count() or 1, on_done)
    finally:
        bar.close()
    df = rows_frame(rows)
    tried = {f.name for f in files}
    df.attrs["files"] = len(files) + len({r["source"] for r in rows if r.get("error") and r["source"] not in tried})
    df.attrs["lines"] = total_lines
    return df
