"""Stage 2: envelopes (journald modes, JSON/export, docker, plain) -> records.

``sniff`` picks a source's format, ``readers`` maps each format to its reader
(``journald``, ``containers``, plain), ``wrappers`` peels copy-paste wrappers,
``clock`` completes partial times, ``clean`` scrubs messages."""
from forensics.envelope.clock import Clock
from forensics.envelope.readers import FORMATS, iter_records
from forensics.envelope.record import Record
from forensics.envelope.sniff import detect_format
from forensics.envelope.wrappers import detect_wrappers, unwrap

__all__ = ["FORMATS", "Clock", "Record", "detect_format", "detect_wrappers", "iter_records", "unwrap"]
