"""systemd's view of a service run: its start, its death, a restart with a
second run, and a clean stop (only journald renderers show the unit's lines)."""

from __future__ import annotations

from random import Random

from .catalog import Ctx, Failure
from .records import Emitter, LogState, sd
from .run import Run


def new_log_state(rng: Random, c: Ctx, renderer: str) -> tuple[LogState, str]:
    """The state of a fresh log and the unit name systemd prints ("Starting …")."""
    st = LogState(c=c, t=rng.uniform(1740787200, 1777507200))
    st.boot_t0 = st.t - rng.uniform(60, 3e6)
    st.tqdm_nl = rng.random() < 0.35
    st.ms = c.server == "sglang" and c.gen == "new" and rng.random() < 0.2
    st.tty = renderer in ("plain", "docker-compose") and rng.random() < 0.12
    st.unit = rng.choice(["sglang.service", "sglang-server.service", "llm.service"]) if c.server == "sglang" else rng.choice(["vllm.service", "vllm-openai.service", "llm.service"])
    st.unit_desc = {"sglang": rng.choice(["SGLang server", "SGLang inference server", "LLM inference (SGLang)"]),
                    "vllm": rng.choice(["vLLM OpenAI server", "vLLM server", "LLM inference (vLLM)"])}[c.server]
    unit_fmt = rng.choice(["combined", "combined", "description", "name"])
    unit_name = {"combined": f"{st.unit} - {st.unit_desc}", "description": st.unit_desc, "name": st.unit}[unit_fmt]
    return st, unit_name


def systemd_start(em: Emitter, st: LogState, rng: Random, unit_name: str) -> None:
    sd(em, st, f"Starting {unit_name}...", unit_prefix=False)
    st.t += rng.uniform(0.01, 0.3)
    sd(em, st, f"Started {unit_name}.", unit_prefix=False)


def systemd_death(em: Emitter, st: LogState, rng: Random, failure: Failure, kind: str, unit_name: str) -> None:
    """How systemd reports the first run's death, by the way it died."""
    em.adv(0.05, 2)
    if kind == "oom-kill":
        for s in failure.systemd:
            sd(em, st, s, tag="fatal" if failure.fatal in s else "")
        sd(em, st, "Main process exited, code=killed, status=9/KILL")
        sd(em, st, "Failed with result 'oom-kill'.", tag="fatal" if "oom-kill" in failure.fatal else "")
    elif kind == "signal":
        sd(em, st, "Main process exited, code=killed, status=9/KILL")
        sd(em, st, "Failed with result 'signal'.")
    elif kind == "timeout":
        sd(em, st, f"Killing process {st.main_pid} (python3) with signal SIGKILL.") if rng.random() < 0.4 else None
        sd(em, st, "Failed with result 'timeout'.")
        sd(em, st, f"Failed to start {unit_name}.", unit_prefix=False)
    else:
        sd(em, st, f"Main process exited, code=exited, {failure.exit_status or 'status=1/FAILURE'}")
        sd(em, st, "Failed with result 'exit-code'.")
    if rng.random() < 0.4:
        sd(em, st, f"Consumed {rng.randint(0, 40)}min {rng.uniform(0, 59):.3f}s CPU time.")


def _second_death(em: Emitter, st: LogState, failure: Failure, kind: str) -> None:
    em.adv(0.05, 2)
    if kind == "signal":
        sd(em, st, "Main process exited, code=killed, status=9/KILL")
        sd(em, st, "Failed with result 'signal'.")
    elif kind == "oom-kill":
        sd(em, st, "Main process exited, code=killed, status=9/KILL")
        sd(em, st, "Failed with result 'oom-kill'.")
    else:
        sd(em, st, f"Main process exited, code=exited, {failure.exit_status or 'status=1/FAILURE'}")
        sd(em, st, "Failed with result 'exit-code'.")


def restart(em: Emitter, st: LogState, rng: Random, failure: Failure, unit_name: str, info: dict) -> None:
    """A restart (or a reboot) and a second run, which fails again or is still starting."""
    c = st.c
    info["runs"] = 2
    em.adv(5, 30)
    if c.journald:
        reboot = rng.random() < 0.25
        if reboot:
            st.boot += 1
            em.adv(60, 600)
            st.boot_t0 = st.t - rng.uniform(20, 60)
            sd(em, st, f"Starting {unit_name}...", unit_prefix=False)
            info["reboot"] = True
        else:
            sd(em, st, "Scheduled restart job, restart counter is at 1.")
            sd(em, st, f"Stopped {unit_name}.", unit_prefix=False)
        sd(em, st, f"Started {unit_name}.", unit_prefix=False)
    second_fails = rng.random() < 0.6
    run2 = Run(st, failure if second_fails else None, None if second_fails else rng.choice(["load-weights", "memory-plan", "cuda-graph-capture"]), None)
    run2.pre_done = True
    if run2.run() == "failed" and c.journald:
        _second_death(em, st, failure, getattr(run2, "exit_kind", "exit-code"))


def after_death(run: Run, rng: Random, renderer: str, unit_name: str, info: dict) -> None:
    """After a failed run: systemd's view of the death, then perhaps a restart."""
    em, st, c, failure = run.em, run.st, run.c, run.failure
    assert failure is not None
    if c.journald:
        systemd_death(em, st, rng, failure, getattr(run, "exit_kind", "exit-code"), unit_name)
    if rng.random() < 0.22 and c.tp <= 2 and renderer != "json":
        restart(em, st, rng, failure, unit_name, info)


def shutdown(run: Run, rng: Random, unit_name: str) -> None:
    """A clean stop of a ready server: uvicorn's shutdown lines and systemd's."""
    em, st, c = run.em, run.st, run.c
    em.adv(30, 3000)
    st.phase = "shutdown"
    if c.journald:
        sd(em, st, f"Stopping {unit_name}...", unit_prefix=False)
    em.adv(0.01, 0.5)
    em.uv("INFO", "Shutting down")
    em.uv("INFO", "Waiting for application shutdown.")
    em.uv("INFO", "Application shutdown complete.")
    if c.server == "sglang":
        em.uv("INFO", f"Finished server process [{st.main_pid}]")
    elif c.tp > 1 and c.gen != "v06":
        run.vlog_ranks("INFO", "multiproc_executor.py", lambda i: "Parent process exited, terminating worker", [1] if c.tp > 1 else [0])
    if c.journald:
        em.adv(0.5, 5)
        sd(em, st, "Deactivated successfully.")
        sd(em, st, f"Stopped {unit_name}.", unit_prefix=False)
        if rng.random() < 0.6:
            sd(em, st, f"Consumed {rng.randint(1, 600)}min {rng.uniform(0, 59):.3f}s CPU time.")
