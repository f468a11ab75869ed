"""Stage 3: messages -> typed events (router regex + Lark grammars)."""
from forensics.events.types import Event, ExceptionRecord, Frame

__all__ = ["Event", "ExceptionRecord", "Frame"]
