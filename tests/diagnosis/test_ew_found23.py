"""Issue 28's retrospective recall (fix-ewfound23): lines a person reads first before a failure that
linking did not list. Classes of ``wording.yaml`` read after the fact only (a launcher still waiting, a
package asked to be installed, a client reconnecting, a full KV cache, an interface whose compatibility
is not kept, NVIDIA's management library missing, a model that needs more memory than is free, a
context below the trained one, a server not responding) make such a line a candidate at any level and
weigh it where its failure follows; trouble words (data found corrupt, a setting that forces a choice);
a level in brackets that opens the line; a warning written onto a progress bar's line; the package a
native source path names. Realistic lines, from the programs that print them."""
from __future__ import annotations

import pytest

from forensics.diagnosis.early_warnings import subjects
from forensics.diagnosis.early_warnings.baseline import Baseline
from forensics.diagnosis.early_warnings.candidates import (
    Candidate, _judge, after_progress_bar, is_noise, is_noise_after_the_fact)
from forensics.diagnosis.early_warnings.live import live_decision
from forensics.diagnosis.early_warnings.scoring import LIST_THRESHOLD, Failure, score_candidate
from forensics.events import types as kinds
from forensics.events.types import Event

EMPTY = Baseline(frozenset(), {}, {}, 0)


def _failure(label: str, text: str) -> Failure:
    return Failure(label, 50, None, text, subjects(text))


# (a line printed with no level or at INFO/DEBUG, the failure it foretold, its class)
FORETOLD = [
    ("Still waiting for llama-server...",
     _failure("hang.timeout", "llama-server failed to start within timeout"), "still-waiting"),
    ("aiter is AMD specific kernel library. Please make sure aiter is installed on your AMD device.",
     _failure("env.module-missing", "NameError: name 'paged_attention_ragged' is not defined"), "asks-to-install"),
    ("[2025-12-31 10:49:40 DP4 TP19 EP19] Attempting to reconnect to 192.168.0.81:8995...",
     _failure("dist.nccl", "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:535] Read error "
                           "[192.168.0.184]:6858: Connection reset by peer"), "reconnecting"),
    ("[2026-04-12 23:25:37] KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: 2062",
     _failure("gpu.out-of-memory", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.92 GiB."),
     "kv-cache-full"),
    ("DEBUG 04-10 22:38:54 [__init__.py:93] CUDA platform is not available because: NVML Shared Library Not Found",
     _failure("env.driver-too-old", "NotImplementedError"), "driver-library-not-found"),
    ('time=2026-03-25T09:45:06.702Z level=INFO source=server.go:1034 msg="model requires more system memory than is '
     'currently available, evicting a model to make space"',
     _failure("host.out-of-memory", 'msg="Load failed" error="model requires more system memory (5.3 GiB) than is '
                                    'available (4.8 GiB)"'), "needs-more-memory-than-available"),
    ("llama_new_context_with_model: n_ctx_per_seq (512) < n_ctx_train (4096) -- the full capacity of the model will "
     "not be utilized",
     _failure("config.invalid-argument", 'ValueError: Requested tokens (590) exceed context window of 512'),
     "context-below-trained"),
    ("(EngineCore pid=1) INFO 05-01 20:53:43 [shm_broadcast.py:681] No available shared memory broadcast block found in "
     "60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. "
     "compilation, weight/kv cache loading).",
     _failure("hang.timeout", "TimeoutError: RPC call to sample_tokens timed out."), "peers-may-hang"),
]
# Classes announced live as well as read after the fact (fix-ew24: a KV cache that is full was printed by 5
# failed logs and 2 healthy ones of corpora/public)
LIVE_TOO = {"kv-cache-full"}


@pytest.mark.parametrize("line,fail,cid", FORETOLD)
def test_a_line_that_says_its_failure_follows_is_a_candidate_and_listed(line: str, fail: Failure, cid: str) -> None:
    ev = Event(kinds.MESSAGE, 9, line)
    assert _judge(ev)[2] is not None  # a candidate, whatever its level
    score, reasons, _ = score_candidate(Candidate(ev, None), fail, EMPTY, {})
    assert score >= LIST_THRESHOLD and any(cid in r for r in reasons), (score, reasons)


@pytest.mark.parametrize("line,fail,cid", [f for f in FORETOLD if f[2] not in LIVE_TOO])
def test_a_class_read_after_the_fact_is_not_announced_live(line: str, fail: Failure, cid: str) -> None:
    d = live_decision(Event(kinds.LOG, 9, line), base=EMPTY)
    assert d is None or cid not in d["why"]


@pytest.mark.parametrize("line,fail,cid", [f for f in FORETOLD if f[2] in LIVE_TOO])
def test_a_full_kv_cache_is_announced_live(line: str, fail: Failure, cid: str) -> None:
    d = live_decision(Event(kinds.LOG, 9, line), base=EMPTY)
    assert d is not None and cid in d["why"] and "gpu.out-of-memory" in d["predicts"]


def test_a_class_weighs_nothing_before_another_failure() -> None:
    ev = Event(kinds.MESSAGE, 9, "Still waiting for llama-server...")
    port = _failure("net.port-in-use", "OSError: [Errno 98] Address already in use")
    hang = _failure("hang.timeout", "llama-server failed to start within timeout")
    other, reasons, _ = score_candidate(Candidate(ev, None), port, EMPTY, {})
    assert other < score_candidate(Candidate(ev, None), hang, EMPTY, {})[0]
    assert not any("still-waiting" in r for r in reasons)


def test_a_warning_interface_whose_compatibility_is_not_kept_before_a_signature_error() -> None:
    ev = Event(kinds.LOG, 9, "Using custom scheduler class <class 'tpu_inference.core.sched.dp_scheduler.DPScheduler'>. "
                             "This scheduler interface is not public and compatibility may not be maintained.",
               level="WARNING")
    fail = _failure("env.abi-mismatch", "TypeError: DPScheduler.__init__() got an unexpected keyword argument "
                                        "'hash_block_size'")
    score, reasons, _ = score_candidate(Candidate(ev, "WARNING"), fail, EMPTY, {})
    assert score >= LIST_THRESHOLD and any("compatibility-not-kept" in r for r in reasons)


@pytest.mark.parametrize("line", [
    # SGLang's PD disaggregation (no level: SGLang's log format prints none)
    "[2026-04-07 13:24:13 TP0] Context corruption detected: Request 3b5dcfe1 (bootstrap_room=7451500070298748792) "
    "received metadata from bootstrap_room=4125156593077881415.",
    # vLLM config.py at INFO: an environment variable overrides the backend the program would choose
    "(APIServer pid=1) INFO 06-10 04:11:03 [config.py:112] Gemma4 has heterogeneous head dimensions (head_dim=256, "
    "global_head_dim=512) and VLLM_FLASHINFER_VOSPLIT is set: forcing FLASHINFER with the FA2 VO split instead of "
    "TRITON_ATTN.",
])
def test_trouble_words_make_a_candidate(line: str) -> None:
    assert _judge(Event(kinds.MESSAGE, 3, line))[2] is not None


def test_a_force_without_the_choice_it_overrides_is_no_trouble() -> None:
    from forensics.diagnosis.early_warnings.candidates import CUE_RE

    assert CUE_RE.search("VLLM_FLASHINFER_VOSPLIT is set: forcing FLASHINFER with the FA2 VO split instead of TRITON_ATTN")
    assert not CUE_RE.search("[transformers] Offline mode: forcing local_files_only=True")


@pytest.mark.parametrize("line", [
    "INFO 01-01 00:00:00 [config.py:100] enforce_eager=True",
    "Loading safetensors checkpoint shards: 100% Completed | 4/4",
])
def test_words_near_them_do_not(line: str) -> None:
    assert _judge(Event(kinds.MESSAGE, 3, line))[2] is None


def test_a_level_in_brackets_that_opens_the_line_is_a_candidates_level() -> None:
    # llama-swap's own log (proxy/metrics.go): its level in brackets, no envelope
    got = _judge(Event(kinds.MESSAGE, 17, "[WARN] metrics skipped, HTTP status=500, path=/v1/chat/completions"))
    assert got[1] == "WARNING" and got[2] is not None
    assert _judge(Event(kinds.MESSAGE, 18, "[INFO] <model> Health check passed on http://localhost:5800/health"))[2] \
        is None


BAR = ("Adding requests:  88%|" + "\u2588" * 40 + "          | 453/512 [00:06<00:00, 79.11it/s]")
GLUED = BAR + ("(EngineCore_DP0 pid=10311) [kvcached][WARNING][2025-10-25 11:17:27][kv_cache_manager.py:164] "
               "available_size()=9.0 < need_size=30")


def test_a_warning_written_onto_a_progress_bar_is_no_noise_after_the_fact() -> None:
    assert is_noise_after_the_fact(BAR) and after_progress_bar(BAR) is None
    assert not is_noise_after_the_fact(GLUED) and "available_size()" in (after_progress_bar(GLUED) or "")
    got = _judge(Event(kinds.PHASE_MARKER, 2, GLUED))  # vLLM's request bar is a serving marker
    assert got[1] == "WARNING" and got[2] is not None
    # a bar followed by plain output (no level of its own) stays a bar
    assert is_noise_after_the_fact(BAR + " est. speed input: 1680.77 toks/s, output: 7.16 toks/s")
    # live it stays noise (CuTe DSL's package-walk warning written onto SGLang's capture bar by
    # healthy Blackwell start-ups: its precursor would be announced there)
    assert is_noise(GLUED)
    cute = ("Capturing batches (bs=256 avail_mem=65.06 GB):   0%|          | 0/36 [00:00<?, ?it/s]2026-06-07 "
            "18:51:07,171 - CUTE_DSL - WARNING - [handle_import_error] - Unexpected error during package walk: "
            "cutlass.cute.experimental")
    assert live_decision(Event(kinds.PHASE_MARKER, 56, cute), base=EMPTY) is None


def test_a_native_source_path_names_the_package_whose_tree_holds_it() -> None:
    line = ("RuntimeError: Error in function 'BatchPrefillWithPagedKVCacheDispatched' at "
            "/opt/my-flashinfer/include/flashinfer/attention/prefill.cuh:3201: Unsupported max_mma_kv: 0")
    assert "pkg:flashinfer" in subjects(line)
    assert not any(s.startswith("pkg:") for s in subjects("/home/u/src/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error"))
