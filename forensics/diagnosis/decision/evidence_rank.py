"""Which evidence line proves the failure, learned (issue 27): every line the
diagnosis lists as evidence gets features (its role, whether it is an exception
line, a compiler's or a device runtime's error, a wrapper's or a consequence's
wording, where it stands among the others, what the message catalogue and the
wording classes say of it, whether it names a value or its error's own name
(an exception class, an error constant), whether it points elsewhere for the
cause, its ERROR level, whether another candidate restates it or it restates an
earlier one) and a conditional logit (one softmax over each log's lines) trained
on the public corpus's labelled proving lines, read as families never met, ranks
them; the best comes first. Lines the rules did not list but offered
(``evidence_offered``: error lines beside the listed ones, the next exception of a
chain, lines the catalogue knows as errors) are ranked with them. It ships only
where it beat the rules' order on held-out families (``decision_train``).

The list's roles are kept (a ``wrapper`` stays a wrapper wherever it lands)."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from forensics.diagnosis import catalogue_features
from forensics.diagnosis.decision.pair_model import built, load
from forensics.diagnosis.phase_priors import STARTUP_FAILED
from forensics.incidents import outcome

ROLES = ("cause", "supporting", "root", "last-frame", "fragment", "wrapper", "build-error", "runtime-error",
         "consequence", "fatal", "offered")
OFFERS = ("error", "quiet", "worded", "exception", "chain", "known")  # evidence_offered's kinds
_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::|$)")
_ERROR_WORD = re.compile(r"(?i)\berror\b|\bfatal\b|\bfailed\b|\bnot found\b|\bcannot\b|\bunable\b")
_FRAME = re.compile(r'^\s*File "|^\s*at |^\s*#\d+ ')
FEATURES: tuple[str, ...] = tuple(f"role:{r}" for r in ROLES) + (
    "first", "position", "exception_line", "error_word", "compiler_error", "proof_runtime", "proof_build",
    "proof_assert", "consequence_wording", "startup_wrapper_wording", "frame_line", "earliest", "latest", "short") + \
    tuple(f"offer:{k}" for k in OFFERS) + (
    "before_first", "after_first", "near_first", "catalogue_error", "catalogue_label", "catalogue_quiet", "quiet_level",
    "weak_first", "offered_over_weak", "last_exception", "strong_over_weak", "labelled_over_unlabelled",
    "exception_over_plain", "wording_says", "names_value", "reason_depth", "extends_first", "restated_later",
    "earliest_error", "after_death_line", "shared_text", "names_error", "points_elsewhere", "restates_earlier",
    "error_level")
# What makes a message specific, in any program: a quoted name or path, a size or a count with
# its unit, an errno, a numeric code in brackets or after a colon.
_VALUE = re.compile(r"'[^']{2,}'|\"[^\"]{2,}\"|`[^`]{2,}`|\b\d+(?:\.\d+)? ?(?:[KMGT]i?B|bytes)\b|\[Errno \d+\]|"
                    r"\berror \d+\b|\(error \d+\)|/[\w.-]+/[\w./-]+")
_REASON_SEP = re.compile(r": (?=\S)")
# Any program's words for its own end (the death, not the error): an exit, a signal, a summary.
_DEATH_LINE = re.compile(r"(?i)\bexit(?:ed|ing)? (?:with )?(?:code|status)\b|\bexit code\b|\bterminated\b|"
                         r"\bSegmentation fault\b|\bAborted\b|\bcore dumped\b|\bpanicked at\b|\bsignal \d+\b")
# A level word of a line printed at INFO/DEBUG (logfmt, bracketed, glog's I-prefix, Python's logging).
_QUIET_LEVEL = re.compile(r"\blevel=(?:info|debug)\b|\[(?:INFO|DEBUG) ?\]|(?:^|\s)(?:INFO|DEBUG)(?:\s|:)|^I\d{4} ")
# A program's own name for its error anywhere in the line, not only at its start: an exception
# class (torch.OutOfMemoryError, SafetensorError), an error enum or constant (Vulkan's
# ErrorOutOfDeviceMemory, CUDA's cudaErrorAssert, NCCL's ncclSystemError). A line that names its
# error says what failed; one that says "allocation failed" only that something did.
_NAMED_ERROR = re.compile(r"\b[A-Za-z]*[a-z](?:Error|Exception)\b|\b[a-z]*Error[A-Z]\w+")
# Wording of a line that points to another line for the cause (a wrapper's, in any program).
_POINTS_ELSEWHERE = re.compile(r"(?i)\bsee (?:the )?(?:root cause|(?:stack )?trace(?:back)?|"
                               r"(?:the )?(?:errors? |logs? )?above|(?:the )?(?:errors? |logs? )?below)|"
                               r"\bfor the actual cause\b|\bcheck the (?:logs?|errors?)\b|\bscroll up\b|\bprevious (?:error|exception)\b")
# A level word of a line printed at ERROR/FATAL/CRITICAL (logfmt, bracketed, glog's E/F prefix, Python's logging).
_ERROR_LEVEL = re.compile(r"\blevel=(?i:error|fatal|crit\w*)\b|\[(?:ERROR|FATAL|CRITICAL|E|F) ?\]|"
                          r"(?:^|\s)(?:ERROR|FATAL|CRITICAL)(?:\s|:)|^[EF]\d{4} ")
INDEX = {name: i for i, name in enumerate(FEATURES)}


def entry_vector(entry: dict[str, Any], i: int, lines: list[int], lead: dict[str, Any] | None = None,
                 last_exception: int | None = None, context: list[dict[str, Any]] | None = None) -> list[float]:
    """The features of evidence entry ``i`` (``lines``: every entry's line number; ``lead``: the
    entry the rules listed first; ``last_exception``: the line of the last exception line listed;
    ``context``: every entry, the rules' first first)."""
    x = [0.0] * len(FEATURES)
    role = entry.get("role")
    if role in ROLES:
        x[INDEX[f"role:{role}"]] = 1.0
    text = str(entry.get("text") or "")
    head = text[:2000]
    x[INDEX["first"]] = 1.0 if i == 0 else 0.0
    x[INDEX["position"]] = i / 5.0
    x[INDEX["exception_line"]] = 1.0 if _EXCEPTION.search(head) else 0.0
    x[INDEX["error_word"]] = 1.0 if _ERROR_WORD.search(head) else 0.0
    x[INDEX["compiler_error"]] = 1.0 if outcome.is_compiler_error(head) else 0.0
    cls = outcome.proof_class(head)
    if cls in ("runtime", "build", "assert"):
        x[INDEX[f"proof_{cls}"]] = 1.0
    x[INDEX["consequence_wording"]] = 1.0 if outcome.CONSEQUENCE.search(head) else 0.0
    x[INDEX["startup_wrapper_wording"]] = 1.0 if STARTUP_FAILED.search(head) else 0.0
    x[INDEX["frame_line"]] = 1.0 if _FRAME.search(head) else 0.0
    line = entry.get("line")
    if isinstance(line, int) and lines:
        x[INDEX["earliest"]] = 1.0 if line == min(lines) else 0.0
        x[INDEX["latest"]] = 1.0 if line == max(lines) else 0.0
    x[INDEX["short"]] = 1.0 if len(text.strip()) < 40 else 0.0
    offer = entry.get("offer")
    if offer in OFFERS:
        x[INDEX[f"offer:{offer}"]] = 1.0
    first = lead.get("line") if lead is not None and isinstance(lead.get("line"), int) else None
    weak = lead is not None and weak_lead(lead)
    x[INDEX["weak_first"]] = 1.0 if weak and i == 0 else 0.0
    x[INDEX["offered_over_weak"]] = 1.0 if weak and role == "offered" else 0.0
    x[INDEX["last_exception"]] = 1.0 if line == last_exception and x[INDEX["exception_line"]] else 0.0
    if isinstance(line, int) and first is not None and line != first:
        x[INDEX["before_first"]] = 1.0 if line < first else 0.0
        x[INDEX["after_first"]] = 1.0 if line > first else 0.0
        x[INDEX["near_first"]] = 1.0 if abs(line - first) <= 3 else 0.0
    err, labelled, quiet = catalogue_facts(head[:400])
    x[INDEX["catalogue_error"]] = err
    x[INDEX["catalogue_label"]] = labelled
    x[INDEX["catalogue_quiet"]] = quiet
    x[INDEX["quiet_level"]] = 1.0 if _QUIET_LEVEL.search(head[:200]) else 0.0
    x[INDEX["error_level"]] = 1.0 if _ERROR_LEVEL.search(head[:200]) else 0.0
    x[INDEX["names_error"]] = 1.0 if _NAMED_ERROR.search(head[:600]) else 0.0
    x[INDEX["points_elsewhere"]] = 1.0 if _POINTS_ELSEWHERE.search(head[:600]) else 0.0
    if lead is not None and i > 0:
        # what this line says that the rules' first line does not (each entry is scored alone:
        # the comparison with the first has to be a feature of its own)
        lead_text = str(lead.get("text") or "")[:2000]
        lead_err, lead_labelled, _ = catalogue_facts(lead_text[:400])
        strong = bool(x[INDEX["exception_line"]] or err or cls in ("runtime", "build") or x[INDEX["compiler_error"]])
        x[INDEX["strong_over_weak"]] = 1.0 if weak and strong else 0.0
        x[INDEX["labelled_over_unlabelled"]] = 1.0 if labelled and not lead_labelled else 0.0
        x[INDEX["exception_over_plain"]] = 1.0 if x[INDEX["exception_line"]] and not _EXCEPTION.search(lead_text) else 0.0
    _wording_and_context(x, entry, head, context or ())
    return x


def _wording_and_context(x: list[float], entry: dict[str, Any], head: str, others: Any) -> None:
    """Features of the wording any program's error has, and of the line among the other candidates:
    a wording class names a label; it names a value (a quoted name, a size, an errno); how many
    reasons it chains ("X: Y: Z"); it holds the first line's message and says more; a later
    candidate restates its words; it is the earliest error-worded line; it comes after a line that
    reports the process's end; its words are shared with another candidate (a repeated message)."""
    from forensics.diagnosis.decision.label_wording import says

    x[INDEX["wording_says"]] = 1.0 if says(head[:600]) else 0.0
    x[INDEX["names_value"]] = 1.0 if _VALUE.search(head[:600]) else 0.0
    x[INDEX["reason_depth"]] = min(len(_REASON_SEP.findall(head[:600])), 4) / 4.0
    line = entry.get("line")
    mine = _words(head)
    first_err: int | None = None
    for o in others:
        ol, ot = o.get("line"), str(o.get("text") or "")[:600]
        if o is entry or not isinstance(ol, int) or not isinstance(line, int):
            continue
        theirs = _words(ot)
        if _ERROR_WORD.search(ot) and (first_err is None or ol < first_err):
            first_err = ol
        if ol > line and mine and len(mine & theirs) >= max(2, len(mine) // 3):
            x[INDEX["restated_later"]] = 1.0
        if ol < line and theirs and mine and len(mine & theirs) >= max(2, 2 * len(mine) // 3):
            x[INDEX["restates_earlier"]] = 1.0
        if ol < line and _DEATH_LINE.search(ot[:400]):
            x[INDEX["after_death_line"]] = 1.0
        if mine and theirs and len(mine & theirs) >= 0.8 * min(len(mine), len(theirs)):
            x[INDEX["shared_text"]] = 1.0
        if o is others[0] and theirs and len(theirs - mine) <= len(theirs) // 4 and len(mine) > len(theirs):
            x[INDEX["extends_first"]] = 1.0
    if isinstance(line, int) and _ERROR_WORD.search(head) and (first_err is None or line < first_err):
        x[INDEX["earliest_error"]] = 1.0


_WORD = re.compile(r"[A-Za-z]{3,}")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def weak_lead(entry: dict[str, Any]) -> bool:
    """Whether the rules' first line only locates or reports the failure: a frame, a wrapper, a
    death, a lost peer, a start-up summary, or a line that neither reads as an exception nor is an
    error the catalogue knows."""
    if entry.get("role") in ("last-frame", "fragment", "wrapper", "fatal", "consequence"):
        return True
    head = str(entry.get("text") or "")[:2000]
    if outcome.CONSEQUENCE.search(head) or STARTUP_FAILED.search(head) or _FRAME.search(head):
        return True
    return not _EXCEPTION.search(head) and not catalogue_facts(head[:400])[0] and outcome.proof_class(head) is None


def last_exception_line(evidence: list[dict[str, Any]]) -> int | None:
    """The line of the last entry that reads as an exception line (a chain's outermost exception)."""
    at = [e["line"] for e in evidence if isinstance(e.get("line"), int) and _EXCEPTION.search(str(e.get("text") or "")[:2000])]
    return max(at) if at else None


@lru_cache(maxsize=2048)
def catalogue_facts(text: str) -> tuple[float, float, float]:
    """What the message catalogue says of a line: an error a program prints when something failed;
    a message with a root-cause label; one it prints only at INFO/DEBUG/WARNING level."""
    found = [e for e in catalogue_features.entries(text) if len(e.template) >= 12]
    if not found:
        return 0.0, 0.0, 0.0
    from forensics.events import catalogue  # type: ignore[attr-defined]  (read: entries found it)

    err = any(catalogue.is_error_level(e) for e in found)
    quiet = bool(found) and not err and any((e.level or "").upper() in ("INFO", "DEBUG", "WARNING") for e in found)
    return float(err), float(any(e.label for e in found)), float(quiet)


def _weights(data: dict[str, Any]) -> tuple[float, ...] | None:
    if "role:offered" not in data["features"]:
        return None  # a model from before lines were offered never saw them
    by_name = dict(zip(data["features"], (float(w) for w in data["weights"])))
    return tuple(by_name.get(f, 0.0) for f in FEATURES)


def ranker() -> tuple[float, ...] | None:
    """The shipped ranker's weights (``FORENSICS_EVIDENCE_MODEL`` names another; ``off`` turns it off)."""
    data = load("evidence.json", "FORENSICS_EVIDENCE_MODEL")
    return built("evidence.json", data, _weights) if data is not None else None


def rank(evidence: list[dict[str, Any]], weights: tuple[float, ...] | None = None) -> list[dict[str, Any]]:
    """``evidence`` best first (stable: equal scores keep the diagnosis's order)."""
    w = weights if weights is not None else ranker()
    if w is None or len(evidence) < 2:
        return evidence
    lines = [e["line"] for e in evidence if isinstance(e.get("line"), int)]
    last = last_exception_line(evidence)
    scores = [sum(a * b for a, b in zip(w, entry_vector(e, i, lines, evidence[0], last, evidence)))
              for i, e in enumerate(evidence)]
    order = sorted(range(len(evidence)), key=lambda i: -scores[i])
    return [evidence[i] for i in order]
