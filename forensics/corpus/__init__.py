"""Synthetic SGLang / vLLM service-log corpus generator.

Run ``python -m forensics.corpus.generate --help``; the Python entry point is
:func:`generate_corpus`.
"""

from __future__ import annotations

from pathlib import Path


def generate_corpus(seed: int, count_per_label: int, healthy: int, out_dir: Path, **kwargs) -> list[dict]:
    """Write a labelled synthetic corpus; see :func:`forensics.corpus.generate.generate_corpus`."""
    from .generate import generate_corpus as _gen

    return _gen(seed, count_per_label, healthy, out_dir, **kwargs)


__all__ = ["generate_corpus"]
