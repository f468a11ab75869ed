"""The versions a diagnosis records: the package's and the taxonomy's. Defined
here, once; stages import them from this module, never from the package root."""
from __future__ import annotations

__version__ = "0.1.0"
TAXONOMY_VERSION = "v1"
