"""Failure injection: the precursor, the failure itself (tracebacks per rank,
C++ aborts, log lines, kernel and systemd messages) and the wrapper lines and
shutdown noise that follow the cause."""

from __future__ import annotations

import time

from .catalog import CAPTURE_HINTS_NEW, CAPTURE_HINTS_OLD, Ctx, Failure, import_frames, pick, sglang_sched_head, tb, vllm_core_head
from .records import RunParts, ts_sg


# How each failure scope is written (the method of FailureInjection); "systemd" writes nothing here.
SCOPE_EMITTERS = {"ranks": "_fail_ranks", "rank0": "_fail_ranks", "main": "_fail_main", "argparse": "_fail_main",
                  "warmup": "_fail_warmup", "cxx": "_fail_cxx", "log": "_fail_log", "kernel": "_fail_kernel"}


class FailureInjection(RunParts):
    """The failure half of :class:`~forensics.lab.generator.run.Run`."""

    # -- precursor
    def maybe_precursor(self, phase: str, before_failure: bool = False) -> None:
        p = self.precursor
        if self.pre_done or p is None:
            return
        if p.phase != phase and not before_failure:
            return
        em, c = self.em, self.c
        if before_failure:
            pass
        self.pre_done = True
        lines = p.lines
        style = p.style
        if c.server == "vllm" and style == "log":
            style = "vlog"
        if c.server == "sglang" and style == "vlog":
            style = "log"
        first = lines[0]
        if style == "log":
            if first.startswith("Unexpected error during package walk"):
                em.bare(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(self.st.t))},{self.r.randint(0, 999):03d} - CUTE_DSL - WARNING - [handle_import_error] - {first}", rank=0, tag="early")
                em.sg(first, None if self.r.random() < 0.5 else 0)
            elif first.startswith("Health check failed") or first.startswith("port "):
                em.sg(first, None, tag="early")
            else:
                ranks = [0] if self.r.random() < 0.6 or first.startswith("KV cache pool") else None
                em.sg_ranks(lambda i: first, ranks, tag="early")
            for extra in lines[1:]:
                em.bare(extra)
        elif style == "vlog":
            proc = "api" if p.vfile in ("arg_utils.py", "config.py") or "platform" in first else ("core" if c.tp == 1 or c.gen == "v06" else ("w", 0))
            if p.vfile in ("scheduler.py",):
                proc = "core"
            em.vl(p.level, p.vfile, first, proc, tag="early")
        elif style in ("raw", "nccl"):
            proc = ("w", 0) if c.server == "vllm" else None
            if c.server == "vllm" and (c.tp == 1 or c.gen == "v09"):
                proc = "core" if c.gen != "v06" else None
            for i, ln in enumerate(lines):
                em.bare(ln, proc=proc, tag="early" if i == 0 or p.substring in ln else "", rank=0)
        elif style == "kernel":
            if c.journald:
                em.add(first, src="kernel", tag="early")
            else:
                self.precursor = None
        elif style == "systemd":
            if c.journald:
                for ln in lines:
                    em.add(f"{self.st.unit}: {ln}", src="systemd", tag="early" if p.substring in ln else "", pid=1)
            else:
                self.precursor = None


    # ------------------------------------------------------------------ failure
    def fail(self) -> None:
        f = self.failure
        assert f is not None
        em, c, r = self.em, self.c, self.r
        self.outcome = "failed"
        if not self.pre_done:
            self.maybe_precursor(f.phase, before_failure=True)
            if self.precursor:
                em.adv(*self.precursor.lead)
        em.adv(0.2, 20)
        exc = list(f.exc)
        if c.server == "sglang" and f.capture_wrap and f.phase == "cuda-graph-capture" and f.scope == "ranks" and exc and r.random() < 0.75:
            exc = self.wrap_capture(exc)
        # -- raw pre lines (compiler output, device asserts, NCCL glog)
        if f.pre and f.scope not in ("log",):
            reps = c.tp if f.pre_scope == "ranks" else 1
            for rep in range(min(reps, 4)):
                for ln in f.pre:
                    tag = "fatal" if f.fatal in ln and f.scope == "cxx" else ""
                    em.bare(ln, proc=("w", rep) if c.server == "vllm" and c.gen != "v06" and c.tp > 1 else ("core" if c.server == "vllm" else None), tag=tag, rank=rep)
        emit = SCOPE_EMITTERS.get(f.scope)
        if emit:
            getattr(self, emit)(f, exc)
        self.after_failure()

    def _fail_ranks(self, f: Failure, exc: list[str]) -> None:
        """A Python traceback per rank (all ranks, some of them, or rank 0)."""
        c, r = self.c, self.r
        ranks = list(range(c.tp)) if f.scope == "ranks" else [0]
        if f.scope == "ranks" and f.label == "dist.nccl" and r.random() < 0.5:
            ranks = sorted(r.sample(ranks, r.randint(1, len(ranks))))
        if len(ranks) > 2 and r.random() < 0.5:
            ranks = ranks[:r.randint(1, 3)]
        self.emit_rank_tracebacks(exc, ranks)

    def _fail_main(self, f: Failure, exc: list[str]) -> None:
        for ln in exc:
            self.tagged_bare(ln, f.fatal, proc="api")

    def _fail_warmup(self, f: Failure, exc: list[str]) -> None:
        self.em.sg("Initialization failed. warmup error: " + exc[0])
        for ln in exc[1:]:
            self.tagged_bare(ln, f.fatal)

    def _fail_cxx(self, f: Failure, exc: list[str]) -> None:
        c, r = self.c, self.r
        for ln in f.cxx:
            self.tagged_bare(ln, f.fatal, proc=("w", 0) if c.server == "vllm" and c.tp > 1 else "core")
        if c.server == "sglang" and c.gen == "new":
            self.em.sg(f"Subprocess scheduler_{r.randrange(c.tp)} (pid={r.choice(self.st.child_pids)}) crashed with exit code -6. Triggering SIGQUIT for cleanup...")

    def _fail_log(self, f: Failure, exc: list[str]) -> None:
        """The cause is one log line (a watchdog, a uvicorn error, a bind failure)."""
        em, c = self.em, self.c
        for ln in f.pre:
            if c.server == "sglang":
                em.sg(ln, 0 if not ln.startswith(("Pyspy", "py-spy", "port ")) else None)
        if f.log_level:
            em.uv(f.log_level, f.log_line, tag="fatal")
            if c.server == "sglang":
                em.uv("INFO", "Waiting for application shutdown.")
                em.uv("INFO", "Application shutdown complete.")
        else:
            rank = 0 if "atchdog" in f.log_line else None
            em.sg(f.log_line, rank, tag="fatal")

    def _fail_kernel(self, f: Failure, exc: list[str]) -> None:
        """The kernel kills a process (OOM killer, Xid); the server sees a dead child."""
        em, c, r = self.em, self.c, self.r
        if c.journald:
            for ln in f.kernel:
                em.add(ln, src="kernel", tag="fatal" if f.fatal in ln else "")
                em.st.t += r.uniform(0, 0.01)
        if c.server == "sglang":
            if c.gen == "new":
                em.sg("Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.")
            elif c.gen == "mid" and f.phase != "serving":
                em.sg("Rank 0 scheduler is dead. Please check if there are relevant logs.")
                em.sg("Exit code: -9")
        elif c.tp > 1 and c.gen != "v06":
            em.vl("ERROR", "multiproc_executor.py", f"Worker proc {'VllmWorker-0' if c.gen == 'v09' else 'Worker_TP0'} died unexpectedly, shutting down executor.", "core")
        else:
            em.vl("ERROR", "core_client.py", "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.", "api")

    def tagged_bare(self, ln: str, fatal: str, proc=None) -> None:
        self.em.bare(ln, proc=proc if self.c.server == "vllm" else None, tag="fatal" if fatal and fatal in ln else "")

    def wrap_capture(self, exc: list[str]) -> list[str]:
        c = self.c
        # the last exception line(s) of the inner error become the outer message
        idx = max(i for i, ln in enumerate(exc) if ln and not ln.startswith(" ") and ":" in ln and not ln.startswith("Traceback") and not ln.startswith("CUDA kernel") and not ln.startswith("For debugging") and not ln.startswith("Compile with"))
        inner_type, _, inner_msg = exc[idx].partition(": ")
        trailer = exc[idx + 1:]
        outer = tb(c.frames([("sglang/srt/model_executor/cuda_graph_runner.py", "__init__", "raise Exception(")]))
        if c.gen != "new":
            hd = sglang_sched_head(c, "cuda-graph-capture")
            cut = next((i for i, ln in enumerate(hd) if "cuda_graph_runner.py" in ln and ln.endswith("in __init__")), len(hd))
            outer = tb(hd[:cut] + c.frames([("sglang/srt/model_executor/cuda_graph_runner.py", "__init__", "raise Exception(")]))
        hints = CAPTURE_HINTS_NEW if c.gen == "new" else CAPTURE_HINTS_OLD
        return exc + ["", "During handling of the above exception, another exception occurred:", ""] + outer + [f"Exception: Capture cuda graph failed: {inner_msg}"] + trailer + hints

    def emit_rank_tracebacks(self, exc: list[str], ranks: list[int]) -> None:
        em, c, r, f = self.em, self.c, self.r, self.failure
        if c.server == "sglang":
            blocks = []
            for i in ranks:
                blk = [(f"[{ts_sg(self.st, self.st.t)}{self.rank_tags_of(i)}] Scheduler hit an exception: {exc[0]}", i)] + [(ln, i) for ln in exc[1:]] + [("", i)]
                blocks.append(blk)
            self.interleave(blocks)
            return
        # vLLM
        if c.gen == "v06":
            if c.tp > 1 and f.phase not in ("launch",) and r.random() < 0.5:
                for i in ranks[:3]:
                    if i == 0:
                        continue
                    em.vl_multi("ERROR", "multiproc_worker_utils.py", [f"Exception in worker VllmWorkerProcess while processing method {pick(r, ['load_model', 'determine_num_available_blocks', 'initialize_cache'])}."] + exc, ("w", i), tag_line=f.fatal)
            em.bare("Process SpawnProcess-1:")
            for ln in exc:
                self.tagged_bare(ln, f.fatal)
            return
        if c.tp > 1 and f.phase != "launch":
            msg = "WorkerProc failed to start." if f.phase != "serving" else "WorkerProc hit an exception."
            wexc = worker_traceback(c, exc, f.phase)
            if r.random() < 0.6:
                ranks = ranks[:r.randint(1, 2)]
            for i in ranks[:4]:
                em.vl_multi("ERROR", "multiproc_executor.py", [msg] + wexc, ("w", i), tag_line=f.fatal)
            if f.phase == "serving":
                em.vl_multi("ERROR", "core.py", ["EngineCore encountered a fatal error."] + tb(vllm_core_head(c, "serving")[:10] + c.frames([("vllm/v1/executor/multiproc_executor.py", "get_response", "raise RuntimeError(")])) +
                            [f"RuntimeError: Worker failed with error '{exc[-1].split(': ', 1)[-1][:120]}', please check the stack trace above for the root cause"], "core", tag_line="")
            else:
                em.vl_multi("ERROR", "core.py", ["EngineCore failed to start."] + tb(vllm_core_head(c, "launch")[:6] + c.frames([("vllm/v1/executor/multiproc_executor.py", "wait_for_ready", "raise e from None")])) +
                            ["Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause."], "core", tag_line="")
        else:
            msg = "EngineCore failed to start." if f.phase != "serving" else "EngineCore encountered a fatal error."
            em.vl_multi("ERROR", "core.py", [msg] + exc, "core", tag_line=f.fatal)

    def rank_tags_of(self, i: int) -> str:
        return self.em.rank_tags[i]

    def interleave(self, blocks: list[list[tuple[str, int]]]) -> None:
        r, em = self.r, self.em
        f = self.failure
        if len(blocks) > 1 and r.random() < 0.25:
            # chunks of several lines from each rank torn into each other
            queues = [list(b) for b in blocks]
            while any(queues):
                q = pick(r, [q for q in queues if q])
                for _ in range(min(len(q), r.randint(1, 6))):
                    ln, i = q.pop(0)
                    em.add(ln, tag="fatal" if f.fatal in ln else "", pid=em.rank_pid(i))
        else:
            for b in blocks:
                for ln, i in b:
                    em.add(ln, tag="fatal" if f.fatal in ln else "", pid=em.rank_pid(i))
                em.st.t += r.uniform(0, 0.3)

    def after_failure(self) -> None:
        """Wrapper lines and shutdown noise that follow the cause."""
        em, c, r, st, f = self.em, self.c, self.r, self.st, self.failure
        em.adv(0.05, 1.5)
        self.exit_kind = "exit-code"
        if f.scope == "systemd":
            em.add(f"{st.unit}: {f.systemd[0]}", src="systemd", pid=1, tag="fatal")
            if c.server == "sglang":
                em.adv(0.1, 2)
                if r.random() < 0.5:
                    em.sg("Received sigquit from a child process. It usually means the child failed.")
            self.exit_kind = "timeout"
            return
        if c.server == "sglang":
            self._sglang_after_failure(f)
        else:
            self._vllm_after_failure(f)
        if f.label == "hang.timeout" and r.random() < 0.3 and f.scope != "systemd":
            em.adv(1, 30)
            em.bare("^CTraceback (most recent call last):" if not c.journald else "Traceback (most recent call last):", proc="api")
            for ln in c.frames([(f"{c.sp}/sglang/srt/entrypoints/http_server.py" if c.server == "sglang" else f"{c.sp}/vllm/entrypoints/cli/serve.py", "launch_server" if c.server == "sglang" else "cmd", "uvicorn.run(" if c.server == "sglang" else "uvloop.run(run_server(args))"),
                                (f"/usr/lib/python{c.py}/threading.py", "wait", "signaled = self._cond.wait(timeout)")]) + ["KeyboardInterrupt"]:
                em.bare(ln, proc="api")

    def _sglang_after_failure(self, f: Failure) -> None:
        """SGLang's parent reports the dead child (SIGQUIT) and the exit kind follows."""
        em, c, r = self.em, self.c, self.r
        if f.scope in ("ranks", "rank0", "cxx", "kernel", "warmup") or (f.scope == "log" and not f.log_level and "atchdog" in f.log_line):
            if c.gen == "new" and f.phase in ("serving",) and r.random() < 0.5:
                em.sg(f"SIGQUIT received. signum=3, frame=<frame at 0x7f{r.randint(10**9, 10**10):x}, file '{c.sp}/sglang/srt/entrypoints/http_server.py', line {r.randint(900, 1500)}, code launch_server>. It usually means one child failed.")
            else:
                em.sg("Received sigquit from a child process. It usually means the child failed.")
            self.exit_kind = "signal"
            if f.scope == "kernel":
                self.exit_kind = "oom-kill"
            if not c.journald and r.random() < 0.45:
                em.add("Killed")
        elif f.scope == "log" and f.log_level:
            self.exit_kind = "exit-code"

    def _vllm_after_failure(self, f: Failure) -> None:
        """vLLM's API server: the engine-start traceback, or the dead engine and uvicorn's shutdown."""
        em, c, r, st = self.em, self.c, self.r, self.st
        if f.scope in ("ranks", "rank0", "cxx") and f.phase != "serving":
            if c.gen == "v06":
                lines = tb(import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "raise RuntimeError(")])) + [
                    "RuntimeError: Engine process failed to start. See stack trace for the root cause."]
            else:
                fc = "{'EngineCore_DP0': 1}" if c.gen in ("v011", "v033") else "{}"
                lines = tb(import_frames(c, [])[:2] + c.frames([("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)"),
                                                                    ("vllm/entrypoints/openai/api_server.py", "build_async_engine_client_from_engine_args", "async_llm = AsyncLLM.from_vllm_config(", True),
                                                                    ("vllm/v1/engine/core_client.py", "__init__", "with launch_core_engines(vllm_config, executor_class,"),
                                                                    ("vllm/v1/engine/utils.py", "wait_for_engine_startup", "raise RuntimeError(\"Engine core initialization failed. \"")])) + [
                    f"RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {fc}"]
            em.adv(0.5, 3)
            for ln in lines:
                em.bare(ln, proc="api")
        elif f.phase == "serving" or f.scope in ("kernel", "cxx"):
            em.vl_multi("ERROR", "async_llm.py", ["AsyncLLM output_handler failed."] + tb(c.frames([("vllm/v1/engine/async_llm.py", "output_handler", "outputs = await engine_core.get_output_async()"),
                                                                                                    ("vllm/v1/engine/core_client.py", "get_output_async", "raise self._format_exception(outputs) from None")])) +
                        ["vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause."], "api", tag_line="")
            for _ in range(r.randint(0, 3)):
                em.uv("INFO", f"127.0.0.1:{r.randint(30000, 65000)} - \"POST /v1/chat/completions HTTP/1.1\" 500 Internal Server Error")
            em.uv("INFO", "Shutting down")
            em.uv("INFO", "Waiting for application shutdown.")
            em.uv("INFO", "Application shutdown complete.")
            em.uv("INFO", f"Finished server process [{st.api_pid}]")
        if r.random() < 0.35:
            em.bare(f"/usr/lib/python{c.py}/multiprocessing/resource_tracker.py:{r.choice([254, 279, 301])}: UserWarning: resource_tracker: There appear to be {r.randint(1, 3)} leaked shared_memory objects to clean up at shutdown")
            em.bare("  warnings.warn('resource_tracker: There appear to be %d '")
        self.exit_kind = "oom-kill" if f.scope == "kernel" else "exit-code"


def worker_traceback(c: Ctx, exc: list[str], phase: str) -> list[str]:
    """The same error as seen from a vLLM multiproc worker: the frames above
    the GPU worker come from ``WorkerProc`` instead of the engine core."""
    cut = next((i for i, ln in enumerate(exc) if "vllm/v1/worker/gpu_worker.py" in ln), None)
    if cut is None or not exc or not exc[0].startswith("Traceback"):
        return exc
    if phase == "serving":
        top = c.frames([("vllm/v1/executor/multiproc_executor.py", "worker_busy_loop", "output = func(*args, **kwargs)", True)])
    else:
        call = next((ln.strip() for ln in exc[cut - 4:cut] if "collective_rpc(" in ln), 'self.collective_rpc("load_model")')
        meth = call.split('"')[1] if '"' in call else "load_model"
        top = c.frames([("vllm/v1/executor/multiproc_executor.py", "worker_main", "worker = WorkerProc(*args, **kwargs)", True),
                        ("vllm/v1/executor/multiproc_executor.py", "__init__", f"self.worker.{meth}()")])
    return [exc[0]] + top + exc[cut:]
