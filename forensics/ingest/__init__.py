"""Stage 1: reading inputs (stdin, files, directories, gzip) into text lines."""
from forensics.ingest.sources import Source, SourceStats, expand_paths

__all__ = ["Source", "SourceStats", "expand_paths"]
