"""TorchServe's worker log (the frontend relays a worker's stdout as log4j lines):
one request's traceback is not the worker's death; a lazily compiled model whose
compile fails at its first request cannot serve any."""
from __future__ import annotations

from pathlib import Path

import forensics

PUBLIC = Path(__file__).resolve().parents[2] / "corpora" / "public"


def test_a_request_that_failed_in_the_handler_leaves_the_worker_serving():
    # batch-48/009: a bad input (ast.literal_eval on prose) fails one request; the
    # worker answers the next ones.
    r = forensics.classify(PUBLIC / "batch-48" / "009.log")
    assert r["verdict"] == "ready" and r["phase"] == "serving"


def test_a_compile_that_fails_at_the_first_request_is_a_failure():
    # batch-48/008: torch.compile's inductor finds no C++ compiler when the first
    # request arrives; every request would fail the same way.
    r = forensics.classify(PUBLIC / "batch-48" / "008.log")
    assert r["verdict"] == "failed" and r["root_cause"] == "toolchain.compiler-missing"
