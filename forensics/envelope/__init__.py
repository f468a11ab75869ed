"""Stage 2: envelopes (journald modes, JSON/export, docker, plain) -> records."""
from forensics.envelope.formats import FORMATS, Clock, Record, detect_format, detect_wrappers, iter_records, unwrap

__all__ = ["FORMATS", "Clock", "Record", "detect_format", "detect_wrappers", "iter_records", "unwrap"]
