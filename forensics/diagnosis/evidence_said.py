"""Where a program said its error first (issue 27, the proving line among the candidates).

A proving line is often said twice: a program logs the error, then returns it wrapped in context
that keeps only generic words (Rust's ``tracing::error!`` then anyhow's "Caused by:" chain out of
``main``); several ranks or workers print the same message one after another. The reader quotes
where it was said with its reason, and first: ``logged_reason`` finds the logged line a chain's
generic cause came from, ``earliest_copy`` the first copy of a message listed first."""
from __future__ import annotations

import re
from typing import Any

from forensics.events import types as kinds
from forensics.incidents import outcome
from forensics.incidents.lifetimes import Incident

# A cause's own words up to its detail: "Could not start backend: " of "Could not start backend: Could
# not start a suitable backend" (words with a space; an exception's bare type name is no such phrase).
_CAUSE_HEAD = re.compile(r"^([A-Za-z][\w'-]*(?: [\w'-]+){1,11}: )\S")
_LOGGED_BEFORE = 40  # lines above the chain searched for the error the program logged before returning it
_NOT_ERROR_LEVELS = frozenset({"INFO", "DEBUG", "TRACE", "NOTICE", "WARNING", "WARN"})


def _kept(inc: Incident, lo: int, hi: int) -> list[Any]:
    """The lines the lifetime kept (its last lines, its error lines) printed from ``lo`` to before
    ``hi``, tracebacks aside, latest first."""
    st = inc.outcome
    if st is None:
        return []
    evs = {ev.line: ev for ev in (*st.recent, *st.errors, *inc.error_lines)
           if lo <= ev.line < hi and ev.kind != kinds.TRACEBACK}
    return sorted(evs.values(), key=lambda e: -e.line)


_WORD = re.compile(r"[a-z]{3,}")


def _restates(head: str, rest: str) -> bool:
    """The cause's detail only says its head again ("Could not start backend: Could not start a
    suitable backend"): half its words or more are the head's (or grow from one: "open", "opened").
    A detail of its own ("... : frobnicator socket refused the handshake") names the reason."""
    said = _WORD.findall(head.lower())
    words = _WORD.findall(rest.lower())
    return bool(words) and 2 * sum(any(w.startswith(h) for h in said) for w in words) >= len(words)


def logged_reason(inc: Incident, at: int, cause: str) -> tuple[int, str] | None:
    """The error a program logged before it returned the chain printed at ``at``, where the chain's
    last cause (``cause``) keeps only its generic words: TEI logs "Could not start Candle backend:
    Could not start backend: cannot find tensor dense.weight" at ERROR, then returns "Error: Could
    not create backend / Caused by: Could not start backend: Could not start a suitable backend".
    The latest line above the chain, not logged as information or a warning, that holds the cause's
    words up to its detail and another detail after them; its log line and text."""
    m = _CAUSE_HEAD.match(cause.strip())
    if m is None:
        return None
    head, rest = m.group(1), cause.strip()[len(m.group(1)):].strip()
    if not _restates(head, rest):
        return None  # the chain names its own reason: a line logged above is another attempt's
    for ev in _kept(inc, at - _LOGGED_BEFORE, at):
        i = ev.text.find(head)
        after = ev.text[i + len(head):].strip() if i >= 0 else ""
        if after and not after.startswith(rest[:40]) and ev.level not in _NOT_ERROR_LEVELS:
            return ev.line, ev.text
    return None


def _quiet(ev: Any) -> bool:
    """Logged as information or a warning, not as an error."""
    return (ev.level or "").upper() in _NOT_ERROR_LEVELS


def _another(theirs: tuple[Any, ...], mine: tuple[Any, ...]) -> bool:
    """A process or rank the parser read (a pid or rank tag) other than ``mine``."""
    return theirs[1:] != (None, None) and theirs != mine


_COPY_BEFORE = 40  # lines above the first listed line searched for an earlier copy of its message
_LISTED = 5  # lines listed (evidence.MAX_EVIDENCE; a list the rules made longer stays as long)


def earliest_copy(inc: Incident | None, evidence: list[dict[str, Any]],
                  warnings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first line listed goes to the first copy of its message the lifetime kept (within
    ``_COPY_BEFORE`` lines above it): ranks and workers print the same error one after another
    (SGLang's "[... DP0 TP2] Watchdog timeout (self.watchdog_timeout=300)", then DP1 TP5's), and the
    first said it first. The same message, prefixes aside (the parser peeled them), printed by another
    process or rank (the parser read its pid or rank tag). An early warning
    on that copy was the failure itself, said first by another rank: it is no warning and goes.
    Returns the early warnings kept."""
    if inc is None or not evidence or not isinstance(evidence[0].get("line"), int):
        return warnings
    lead = evidence[0]
    said = str(lead["text"]).strip()
    at = lead["line"]
    if not said or "\n" in said:
        return warnings
    own = next((ev for ev in _kept(inc, at, at + 1) if ev.text.strip() == said), None)
    if own is None or outcome.process_of(own)[1:] == (None, None):
        return warnings
    # another rank's or worker's copy; the same process saying it again is a retry (a supervisor's
    # restart loop: "Process exited with code null" after each attempt), whose last copy ended it. A
    # copy logged as information or a warning where this one is an error (or the reverse) is no copy:
    # that rank went on past it (a warning before the error is an early warning, and stays one)
    warned, mine = _quiet(own), outcome.process_of(own)
    copies = [ev.line for ev in _kept(inc, at - _COPY_BEFORE, at) if ev.text.strip() == said
              and _quiet(ev) == warned and _another(outcome.process_of(ev), mine)]
    if not copies:
        return warnings
    lead["line"] = min(copies)
    evidence[1:] = [e for e in evidence[1:] if e.get("line") != lead["line"]]
    return [w for w in warnings if w.get("line") != lead["line"]]


# A command-line client's print of the error its server answered with: Go's and Rust's "Error: <err>",
# the HTTP status first when the client adds it ("Error: 500 Internal Server Error: <the server's error>").
_CLIENT_ERROR = re.compile(r"^Error: (?:\d{3} [A-Z][\w ]+: )?(?P<msg>\S.{19,})$")


def echo_gives_way(inc: Incident | None, evidence: list[dict[str, Any]]) -> None:
    """A client's "Error: <msg>" listed first goes to the server's line that logged that message as
    its error field shortly before (Ollama's `error="<msg>"` on its "Load failed" line, printed in
    the same terminal as `ollama run`): the server said it first, and why it failed is its to say."""
    if inc is None or not evidence or not isinstance(evidence[0].get("line"), int):
        return
    m = _CLIENT_ERROR.match(str(evidence[0]["text"]).strip())
    if m is None:
        return
    quoted = f'error="{m.group("msg")}'
    said = [ev for ev in _kept(inc, evidence[0]["line"] - _COPY_BEFORE, evidence[0]["line"]) if quoted in ev.text]
    if said:
        server, keep = said[0], max(_LISTED, len(evidence))  # the latest (``_kept`` is latest first)
        evidence[1:] = [e for e in evidence[1:] if e.get("line") != server.line]
        if evidence[0].get("role") == "cause":
            evidence[0]["role"] = "supporting"
        evidence.insert(0, {"line": server.line, "text": server.text[:600], "role": "cause"})
        del evidence[keep:]
