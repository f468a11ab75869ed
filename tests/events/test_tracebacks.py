"""Traceback assembly across handled and fatal tracebacks of one start-up."""
from __future__ import annotations


from helpers import classify_lines as _run


def test_frames_after_an_exception_line_start_no_chain_in_that_traceback():
    # A plugin's traceback is printed bare and handled; the server logs the fatal one
    # later with its prefix on the header line only. The frames that follow belong
    # to the fatal traceback, not to the handled one (whose exception line came first).
    lines = [
        "[2026-12-01 09:14:01 TP0] Init JAX distributed begin.",
        "Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda13.initialize()",
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/__init__.py", line 369, in initialize',
        "    _check_cuda_versions(raise_on_first_error = True)",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE",
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        "[2026-12-01 09:14:02 TP0] Load weight begin.",
        "[2026-12-01 09:14:04 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/srv/jax_server.py", line 24, in <module>',
        '    gpu = jax.devices("cuda")[0]',
        '  File "/venv/lib/python3.12/site-packages/jax/_src/xla_bridge.py", line 947, in _get_backend_uncached',
        "    raise RuntimeError(",
        "RuntimeError: Unknown backend cuda. Available backends are ['cpu']",
    ]
    from forensics import parse

    tbs = [e for e in parse("\n".join(lines) + "\n") if e.kind == "traceback"]
    assert [(t.line, t.end_line) for t in tbs] == [(3, 7), (9, 14)], [(t.line, t.end_line, t.text) for t in tbs]
    assert tbs[0].text.startswith("RuntimeError: jaxlib/cuda/versions_helpers.cc:135")
    assert tbs[1].text == "RuntimeError: Unknown backend cuda. Available backends are ['cpu']"
    assert _run(lines)["verdict"] == "failed"
