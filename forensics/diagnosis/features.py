"""Classifier features from an incident's structured events (not raw text):
the failing exceptions with variables masked, the modules of the innermost
frames, the phase, the precursor warnings seen, and the last error lines."""
from __future__ import annotations

import re
from typing import Any

from forensics.diagnosis.catalogue_features import catalogue_tokens
from forensics.events import types as kinds
from forensics.incidents.lifetimes import Incident

_MASKS: list[tuple[re.Pattern[str], str]] = [
    # absolute paths (modules go to their own field); not "1/8" (a ratio)
    (re.compile(r"(?<![\w])(?:/[\w.\-+@]+)+/?"), " PATH "),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), " HEX "),
    (re.compile(r"\b[0-9a-f]{16,}\b"), " HEX "),
    (re.compile(r"\bv?\d+(?:\.\d+){1,3}(?:[a-z+]\w*)?\b"), " VER "),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|bytes)\b"), " SIZE "),
    (re.compile(r"\bsm_?\d+[a-z]?\b"), " SMARCH "),
    (re.compile(r"\d+"), " N "),
]
_WS = re.compile(r"\s+")
TEXT_FIELDS = ("text", "exc", "modules", "context", "proof", "catalogue")


def mask(text: str) -> str:
    """Replace variables (paths, numbers, hex, versions) with tokens."""
    for rx, tok in _MASKS:
        text = rx.sub(tok, text)
    return _WS.sub(" ", text).strip()


def _module_tokens(frames: Any, n: int = 6) -> list[str]:
    out = []
    for f in list(frames)[-n:]:
        mod = f.module
        parts = mod.split(".")
        # "flashinfer.jit.core" -> "flashinfer flashinfer.jit flashinfer.jit.core"
        out.extend(".".join(parts[: i + 1]) for i in range(min(3, len(parts))))
        if f.function:
            out.append("fn_" + f.function)
    return out


def frame_tokens(frames: Any, n: int = 8) -> list[str]:
    """What a frame prior looks at: each innermost frame's full module, its
    last component and its function ("sglang.srt.layers.attention.flashinfer_backend",
    "mod_flashinfer_backend", "fn_init_forward_metadata_capture_cuda_graph")."""
    out = []
    for f in list(frames)[-n:]:
        mod = f.module
        out.append(mod)
        out.append("mod_" + mod.rsplit(".", 1)[-1])
        if f.function:
            out.append("fn_" + f.function)
    return out


def incident_frame_tokens(inc: Incident, fail_line: int | None = None) -> str:
    """frame_tokens over the failing tracebacks of an incident (training side of the frame priors)."""
    toks: list[str] = []
    for ev, _phase, _after in inc.tracebacks[-8:]:
        if fail_line is not None and ev.line > fail_line + 2000:
            continue
        for exc in list(ev.data.get("chain") or ())[:3]:
            toks.extend(frame_tokens(exc.frames))
        toks.extend(frame_tokens(ev.data.get("frames") or ()))
    return " ".join(toks)


def incident_features(inc: Incident, phase: str | None, fail_line: int | None = None) -> dict[str, str]:
    exc_parts: list[str] = []
    modules: list[str] = []
    for ev, _phase, _after in inc.tracebacks[-8:]:
        if fail_line is not None and ev.line > fail_line + 2000:
            continue
        chain = ev.data.get("chain") or ()
        for exc in list(chain)[:3]:
            exc_parts.append(mask(exc.rendered[:800]))
            modules.extend(_module_tokens(exc.frames))
        if not chain:
            exc_parts.append(mask(ev.text[:400]))
            for src in ev.data.get("orphan_source") or ():
                exc_parts.append(mask(src))
        modules.extend(_module_tokens(ev.data.get("frames") or ()))
        if ev.data.get("truncated"):
            exc_parts.append("TRUNCATED_TRACEBACK")
    errors = [mask(ev.text[:400]) for ev in list(inc.error_lines)[-20:] if ev.kind != kinds.TRACEBACK]
    context = [f"phase_{phase or 'none'}", f"server_{inc.server or 'none'}"]
    for h in inc.precursor_hits[:50]:
        # The label a warning is mainly about, and which warning it was.
        context.append(f"pred_{h.signature.root_cause}")
        context.append(f"prec_{h.signature.id}")
    if inc.exit:
        context.append(f"exit_{inc.exit.get('code')}_{inc.exit.get('status_name') or inc.exit.get('status')}")
        if inc.exit.get("result"):
            context.append(f"result_{inc.exit['result']}")
    for h in inc.wrapper_hits[:20]:
        context.append("wrapper_" + h.signature.id)
    warn = [mask(ev.text[:200]) for ev in list(inc.warning_lines)[-10:]]
    exc = " \n ".join(exc_parts)
    proof = proof_text(inc, fail_line)
    # An absent field stays empty, not a placeholder word: "NO_FRAMES" and the like were
    # learned from the generated corpus, where NCCL failures come without frames, and sent
    # real logs with no traceback (a glog check, a compiler's error, a Rust panic) to
    # dist.nccl. Public failures, never trained on: 331 -> 342 of 462 classifier top-1.
    return {
        # One text field for exceptions and error lines alike: the same words
        # arrive as a traceback in one log and as a bare error line in another.
        "text": " \n ".join([exc, *errors, *warn]).strip(),
        "exc": exc,
        "modules": " ".join(modules),
        "context": " ".join(context),
        # The proving line alone: its words decide, whatever context surrounds them.
        "proof": mask(proof[:800]) if proof else "",
        # What the message catalogue says the failing lines are (package, exception, label).
        "catalogue": " ".join(catalogue_tokens(inc, proof)),
    }


def proof_text(inc: Incident, fail_line: int | None) -> str | None:
    """The text of the line that proves the failure (the signature hit, the
    traceback's final exception, or the error line at ``fail_line``)."""
    if fail_line is None:
        return None
    for h in inc.failure_hits:
        if h.line == fail_line:
            return h.text
    for ev, _phase, _after in inc.tracebacks:
        chain = ev.data.get("chain") or ()
        if ev.line == fail_line or any(e.line == fail_line for e in chain):
            return chain[-1].rendered if chain else ev.text
    for ev in inc.error_lines:
        if ev.line == fail_line:
            return ev.text
    st = inc.outcome
    if st is not None:
        for ev in st.errors:
            if ev.line == fail_line:
                return ev.text
    for h in inc.wrapper_hits:
        if h.line == fail_line:
            return h.text
    return None


def warning_candidates(inc: Any) -> list:
    """Lines that may be early warnings: WARNING-level lines, and lines of any
    level (SGLang prints none) that read like trouble but are not tracebacks."""
    return list(inc.warning_lines) + [ev for ev in inc.error_lines if ev.kind != kinds.TRACEBACK]
