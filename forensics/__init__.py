"""forensics: log forensics and root-cause classification for LLM inference servers.

Python API (``forensics.api`` says what a log may be: a path, a file object,
an iterable of lines, bytes)::

    import forensics
    result = forensics.classify("server.log")        # the JSON contract, as a dict
    result = forensics.classify_text(pasted_text)    # log text held in memory
    for ev in forensics.parse("server.log"): ...      # structured events
    df = forensics.read_events("server.log")         # one row per event (forensics[batch])
    df = forensics.batch(["logs/"])                  # one row per incident (forensics[batch])
    d = forensics.diff("good.log", "bad.log")       # what changed (JSON-contract dict)
"""
# ruff: noqa: E402
from forensics import native as _native

_native.install()  # before any compiled module can load: compiled or pure, decided once
from forensics import re_cache as _re_cache

if _re_cache.wanted():  # the forensics command only: a library's host keeps its own re and dataclasses
    _re_cache.install()  # before the modules that compile patterns on import
    from forensics import code_cache as _code_cache

    _code_cache.install()  # ... and before those that define dataclasses

from forensics.api import batch, classify, classify_text, diff, parse, read_events
from forensics.versions import TAXONOMY_VERSION, __version__

__all__ = ["parse", "classify", "classify_text", "read_events", "batch", "diff", "__version__", "TAXONOMY_VERSION"]
