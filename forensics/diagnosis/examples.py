"""Every signature's own examples, run through the real event parser: a
``match`` example must be matched by its signature, a ``no_match`` one must
not. (``forensics signatures test`` and the test suite run them.)

Only the stages before diagnosis are used (ingest, events), so checking the
signatures never goes through the Python API or the pipeline."""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import BinaryIO

from forensics.events.types import Event
from forensics.events.parser import iter_source_events
from forensics.ingest.sources import Source
from forensics.diagnosis.signatures import SignatureSet, event_views


@dataclass
class ExampleFailure:
    signature: str
    path: str
    expected: str  # "match" | "no_match"
    example: str


class _ExampleSource(Source):
    """One example's text as a source (a path-less Source would read stdin)."""

    def __init__(self, example: str) -> None:
        super().__init__("<text>", None)
        self._raw = example.encode("utf-8", "surrogateescape")

    def open_binary(self) -> BinaryIO:
        return io.BufferedReader(io.BytesIO(self._raw))  # type: ignore[arg-type]


def example_events(example: str) -> list[Event]:
    """The events the parser makes of one example (a final newline added)."""
    return list(iter_source_events(_ExampleSource(example if example.endswith("\n") else example + "\n")))


def run_examples(sset: SignatureSet) -> tuple[int, list[ExampleFailure]]:
    """Run every signature's own examples through the real parser."""
    failures: list[ExampleFailure] = []
    total = 0
    for sig in sset.signatures:
        for expected, examples in (("match", sig.examples_match), ("no_match", sig.examples_no_match)):
            for ex in examples:
                total += 1
                events = example_events(ex)
                hit = any(s.id == sig.id for ev in events for s, _ in sset.match_views(event_views(ev), [sig]))
                if hit != (expected == "match"):
                    failures.append(ExampleFailure(sig.id, sig.path, expected, ex))
    return total, failures
