"""What a diagnosis says in one sentence when no signature's summary applies."""
from __future__ import annotations

from forensics.events.types import Event
from forensics.incidents.lifetimes import Incident


def _in_phase(phase: str | None) -> str:
    # A log with no start-up marker has no phase to name: say so instead of printing "None".
    return f"phase {phase}" if phase else "no start-up phase recognised"


def healthy_summary(inc: Incident, verdict: str, phase: str | None) -> str:
    """``phase``: the phase the answer reports (the lifetime's last marker, or the one inferred)."""
    if verdict == "no-failure" and inc.stop_requested_line is not None:
        return f"No failure found; the service was asked to stop during start-up ({_in_phase(phase)})."
    if verdict == "ready":
        return "The server reached readiness; no failure found."
    if verdict == "stalled":
        if not phase:
            return "No failure printed, but no progress for a long time (no start-up phase recognised)."
        return f"No failure printed, but no progress for a long time while in phase {phase}."
    if verdict == "starting":
        return f"No failure found; the log ends while the server is still starting ({_in_phase(phase)})."
    return "No failure found in this log."


def unknown_summary(ev: Event | None, truncated: bool, jit_site: str | None = None) -> str:
    if ev is None:
        return "The process ended with a failure status, but the log does not say why."
    if truncated and jit_site:
        return (f"The server failed; the traceback is cut short inside {jit_site}, so a failed or impossible "
                "JIT build is the likely cause, not a certain one.")
    if truncated:
        return "The server failed; the traceback is cut short, so the cause is not certain."
    return "The server failed with an error that no signature knows."
