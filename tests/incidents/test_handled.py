"""Failures their program handles by design (``incidents/handled.yaml``): every entry's examples, and
the verdicts that read them (a handled line is dismissed, an ignored exception's traceback is no
fatal one)."""
from __future__ import annotations

import re

import pytest

from forensics.events.tables import load_table
from forensics.incidents import handled

TABLE = load_table(handled.__file__, "handled.yaml")
CASES = [(part, e["id"], e["regex"], text, want) for part in ("lines", "ignored_tracebacks", "deaths_after") for e in TABLE[part]
         for want, key in ((True, "match"), (False, "no_match")) for text in e["examples"][key]]


@pytest.mark.parametrize("part,eid,regex,text,want", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_every_example(part: str, eid: str, regex: str, text: str, want: bool) -> None:
    assert (re.search(regex, text) is not None) is want, (eid, text)


def _diagnose(text: str) -> dict:
    from forensics.api import classify

    return classify(text)


def test_a_pinned_memory_fallback_is_no_failure() -> None:
    """ggml falls back to an ordinary buffer when pinned memory cannot be had: a start-up that
    prints it and goes on loading is still starting, whatever CUDA error the line quotes."""
    log = ("llama_model_loader: loaded meta data with 30 key-value pairs\n"
           "ggml_cuda_host_malloc: failed to allocate 2560.00 MiB of pinned memory: system has unsupported display driver / cuda driver combination\n"
           "llm_load_tensors: offloading 10 repeating layers to GPU\n")
    assert _diagnose(log)["verdict"] != "failed"
    # the device allocation itself failing is still a failure
    assert _diagnose(log + "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2560.00 MiB on device 0: "
                     "cudaMalloc failed: out of memory\n")["verdict"] == "failed"


def test_an_ignored_exception_at_exit_is_no_failure() -> None:
    """Python's 'Exception ignored in: <obj>' report (a __del__ raising at interpreter exit) after a
    finished run is no failure of it."""
    log = ("INFO 02-27 17:30:53 llm_engine.py:429] init engine (profile, create kv cache, warmup model) took 11.57 seconds\n"
           "Exception ignored in: <function LLMEngine.__del__ at 0xfffda85337f0>\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 501, in __del__\n'
           '  File "/usr/lib/python3.10/site-packages/vllm/executor/multiproc_worker_utils.py", line 139, in close\n'
           "AttributeError: 'NoneType' object has no attribute 'info'\n")
    assert _diagnose(log)["verdict"] != "failed"
    # the same traceback without Python's word that it was ignored ends the run
    assert _diagnose(log.replace("Exception ignored in: <function LLMEngine.__del__ at 0xfffda85337f0>\n", ""))["verdict"] == "failed"


def test_an_ignored_exception_the_process_died_after_is_a_failure() -> None:
    """The ignored exception's message runs into the crash ("Segmentation fault (core dumped)" right
    after it, kept with the message): the process did not go on, it died."""
    log = ("INFO 05-01 10:00:10 model_runner.py:1000] Loading model weights took 14.99 GB\n"
           "Exception ignored in: <function Worker.__del__ at 0x7f00>\n"
           "Traceback (most recent call last):\n"
           '  File "/x/vllm/worker/worker.py", line 50, in __del__\n'
           "    torch.cuda.synchronize()\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert _diagnose(log)["verdict"] != "failed"
    for death in ("Segmentation fault (core dumped)", "Fatal Python error: Aborted"):
        d = _diagnose(log + death + "\n")
        assert d["verdict"] == "failed" and d["root_cause"] == "gpu.illegal-access", (death, d["verdict"])
    # the crash on a line of its own, after the traceback: the exception is still the crash's evidence
    d = _diagnose(log + "\nSegmentation fault (core dumped)\n")
    assert d["verdict"] == "failed" and d["evidence"][0]["text"].startswith("RuntimeError: CUDA error: an illegal memory")
