"""forensics: log forensics and root-cause classification for LLM inference servers.

Python API::

    import forensics
    for ev in forensics.parse("server.log"): ...
    result = forensics.classify("server.log")      # JSON-contract dict
    df = forensics.read_events("server.log")       # one row per event
    df = forensics.batch(["logs/"])                # one row per incident
    d = forensics.diff("good.log", "bad.log")      # what changed (JSON-contract dict)
"""
from forensics.api import batch, classify, diff, parse, read_events

__version__ = "0.1.0"
TAXONOMY_VERSION = "v1"

__all__ = ["parse", "classify", "read_events", "batch", "diff", "__version__", "TAXONOMY_VERSION"]
