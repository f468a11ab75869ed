"""Issue 27 item 3 (healthy logs called failed 0): a failure the program said at once it retries another
way, and went on from, did not end it; a Ctrl-C'd worker's traceback that Python 3.11's blank caret line
cut from its ``KeyboardInterrupt`` is the stop, not a failure."""
from __future__ import annotations

from forensics.api import classify

from conftest import REPO

# llama.cpp's server (public batch-70/017's shape): the compute buffers with pipeline parallelism do
# not fit on one GPU, llama.cpp says it retries without it, and the retry goes on loading.
_OOM = ["1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: "
        "cudaMalloc failed: out of memory",
        "1.06.520.084 E ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512",
        "1.06.520.086 E graph_reserve: failed to allocate compute buffers"]
_RETRY = "1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism"
_GOES_ON = "1.07.304.130 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 50176, kv_unified = 'false'"


def test_a_failure_the_program_retried_another_way_and_went_on_from_is_no_failure():
    d = classify((REPO / "corpora/public/batch-70/017.log").read_text())
    assert d["verdict"] == "starting" and d["root_cause"] is None
    d = classify("\n".join(_OOM + [_RETRY, _GOES_ON]) + "\n")
    assert d["verdict"] == "starting"


def test_a_retry_that_fails_again_or_never_goes_on_stays_a_failure():
    again = "1.07.304.200 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 30000.00 MiB on device 1: " \
            "cudaMalloc failed: out of memory"
    d = classify("\n".join(_OOM + [_RETRY, _GOES_ON, again]) + "\n")
    assert (d["verdict"], d["root_cause"]) == ("failed", "gpu.out-of-memory")
    d = classify("\n".join(_OOM + [_RETRY]) + "\n")  # the log ends on the retry: nothing went on
    assert (d["verdict"], d["root_cause"]) == ("failed", "gpu.out-of-memory")
    d = classify("\n".join(_OOM + [_GOES_ON]) + "\n")  # going on with no word of a retry is not enough
    assert d["verdict"] == "failed"


def test_a_ctrl_c_workers_traceback_cut_by_a_blank_caret_line_is_the_stop():
    """Public batch-66/003: SGLang on Colab answered, then the cell was interrupted; the scheduler's
    traceback ends in a source line of blanks, then its bare ``KeyboardInterrupt``."""
    d = classify((REPO / "corpora/public/batch-66/003.log").read_text())
    assert d["verdict"] == "ready" and d["root_cause"] is None


def test_a_cut_traceback_followed_by_a_real_error_stays_a_failure():
    ready = ["INFO:     Application startup complete.",
             'INFO:     127.0.0.1:50000 - "POST /v1/completions HTTP/1.1" 200 OK']
    cut = ["Traceback (most recent call last):",
           '  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/managers/scheduler.py", line 578, in run',
           "    def process_input_requests(self, recv_reqs: List):",
           "    "]
    d = classify("\n".join(ready + cut + ["RuntimeError: CUDA error: an illegal memory access was encountered"]) + "\n")
    assert d["verdict"] == "failed"
    d = classify("\n".join(ready + cut + ["KeyboardInterrupt"]) + "\n")
    assert d["verdict"] == "ready"
