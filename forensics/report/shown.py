"""The lifetimes a text report shows, and only those.

A text report names the top-level lifetime in full (the last failed one,
else the last one) and lists the verdict and cause of the first ``LISTED``
lifetimes, then how many more there were. A crash-looping service leaves
thousands of lifetimes, and diagnosing each one in full (evidence, early
warnings, the classifier) is most of classify's time on such a log. So for
a text report the composer diagnoses in full only these lifetimes; every
other one is only judged failed or not, which decides the top level.

``--format json`` lists every lifetime in full and does not use this.
"""
from __future__ import annotations

from typing import Any

# How many lifetimes the text report lists by verdict and cause.
LISTED = 8


class ShownLifetimes:
    """The answers a text report reads: the first ``LISTED`` in full, the
    top-level candidates (``last``, ``last_failed``) and the count of all.
    Asking for any other lifetime is an error, never a made-up answer."""

    def __init__(self) -> None:
        self.listed: list[dict[str, Any]] = []
        self.count = 0
        self.last: dict[str, Any] | None = None
        self.last_failed: dict[str, Any] | None = None

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.count)
            if stop <= len(self.listed) or step != 1:
                return self.listed[i]
            raise IndexError("a text report keeps only its listed lifetimes")
        if i < 0:
            i += self.count
        if i < len(self.listed):
            return self.listed[i]
        for kept in (self.last_failed, self.last):
            if kept is not None and kept["index"] == i:
                return kept
        raise IndexError("a text report keeps only the lifetimes it shows")

    def __iter__(self) -> Any:
        raise TypeError("a text report keeps only the lifetimes it shows; use --format json for all of them")
