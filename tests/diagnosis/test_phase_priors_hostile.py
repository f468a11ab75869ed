"""``phase_priors``' wording regexes on hostile lines: bounded time (its texts are cut to 4,000
characters, but a classify reads many of them)."""
from __future__ import annotations

import time

from forensics.diagnosis import phase_priors


def test_child_died_starting_is_linear_on_a_long_dashed_line():
    # Against a peer in the same run, not a wall clock (a loaded machine breaks a fixed bound): the same
    # line at a quarter of its length. Linear: ~4x as long; quadratic: 16x.
    def fastest(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(10):
                assert not phase_priors.child_died_starting([text])
            best = min(best, time.perf_counter() - t)
        return best

    # a server's name tried from every word boundary, no "-server " after it
    whole, part = fastest("a-" * 2_000), fastest("a-" * 500)
    assert whole < max(10 * part, 0.02), (whole, part)


def test_child_died_starting_still_reads_a_supervisors_words():
    assert phase_priors.child_died_starting(["ERROR llama-server failed to start within timeout"])
    assert phase_priors.child_died_starting(["whisper-server process has terminated with exit code 1"])
