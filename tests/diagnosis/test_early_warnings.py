"""Early warnings that generalise (issue 12): subjects, linking on whole real
logs, the healthy baseline, and watch's live precision on healthy logs."""
from __future__ import annotations

import re

import json
from pathlib import Path

import pytest
from conftest import CORPORA, REAL, REPO, needs_real

from forensics.diagnosis import early_warnings as E
from forensics.lab.evaluate import evaluate_dirs
from forensics.events import types as kinds
from forensics.events.types import Event

SEED1 = REPO / "examples" / "sglang-b300-flash-attn-cute.log"


@pytest.mark.parametrize("text, expected", [
    # GPU architectures, every spelling, one form
    ("sm_90", {"arch:sm_90"}), ("sm90a", {"arch:sm_90a"}), ("compute_90", {"arch:sm_90"}),
    ("compute capability 12.0", {"arch:sm_120"}), ("Device capability 8.0 not supported", {"arch:sm_80"}),
    ("NVIDIA B300 with CUDA capability sm_103 is not compatible", {"arch:sm_103"}),
    ("compute capability (9, 0)", {"arch:sm_90"}), ("gfx90a", {"arch:gfx90a"}), ("gfx1201", {"arch:gfx1201"}),
    # packages, modules, distribution names
    ("No module named 'flash_attn.cute'", {"pkg:flash_attn", "mod:cute"}),
    ("Unexpected error during package walk: cutlass.cute.experimental", {"pkg:cutlass", "mod:cute"}),
    ("Failed to import from vllm._C with ImportError", {"pkg:vllm", "mod:vllm._c", "mod:_c"}),
    ("NotImplementedError: _C::rotary_embedding", {"mod:_c", "mod:rotary_embedding"}),
    ("pip install nvidia-cutlass-dsl==4.2.1", {"pkg:cutlass"}),
    ("transformers==4.57.6, which is lower than the required version", {"pkg:transformers"}),
    ("Triton is not installed. Using dummy decorators.", {"pkg:triton"}),
    # native libraries, tools, environment variables
    ("libnvrtc.so.13: cannot open shared object file", {"lib:nvrtc"}),
    ("/usr/bin/ld: cannot find -lcudart", {"lib:cudart", "tool:ld"}),
    ("/usr/local/cuda/bin/nvcc not found", {"tool:nvcc"}), ("ninja: build stopped", {"tool:ninja"}),
    ("ptxas fatal   : Unresolved extern function", {"tool:ptxas"}),
    ("TORCH_CUDA_ARCH_LIST is not set", {"env:TORCH_CUDA_ARCH_LIST"}), ("CUDA_HOME is unset", {"env:CUDA_HOME"}),
    ("NCCL_NET_GDR_LEVEL set by environment to SYS", {"env:NCCL_NET_GDR_LEVEL", "coll:nccl"}),
    # devices and counts, models, quantisation, backends, collectives, quantities
    ("Launch DP1 starting at GPU #4.", {"dev:4"}), ("self.gpu_id=6", {"dev:6"}),
    ("tp_size=4", {"count:tp=4"}), ("'tensor_parallel_size': 8", {"count:tp=8"}),
    ("The number of required GPUs exceeds the total number of available GPUs", {"count:gpus"}),
    ("model type `glm4_moe_lite` but Transformers does not recognize", {"model:glm4_moe_lite"}),
    ("Resolved architecture: Qwen2ForCausalLM", {"model:qwen2forcausallm"}),
    ("quantization=awq explicitly", {"quant:awq"}),
    ("FA2 is only supported on devices with compute capability >= 8", {"backend:flash_attn", "arch:sm_80"}),
    ("Custom allreduce is disabled", {"coll:all_reduce"}),
    ("Model loading took 9.38 GiB memory", {"qty:9.38GiB"}), ("avail mem=2.09 GB", {"qty:1.95GiB"}),
])
def test_subjects(text, expected):
    got = E.subjects(text)
    assert expected <= got, (text, sorted(got))


def test_subjects_ignore_paths_and_boilerplate():
    got = E.subjects('/home/u/.venv-vllm/lib/python3.12/site-packages/transformers/utils/hub.py:110: FutureWarning')
    assert "pkg:transformers" in got and "pkg:vllm" not in got  # a venv's name is not a package
    assert not any(s.startswith("env:CUDA_LAUNCH") for s in E.subjects("For debugging consider passing "
                                                                         "CUDA_LAUNCH_BLOCKING=1"))


def test_text_level_and_noise():
    ev = Event(kinds.MESSAGE, 3, " WARN text_generation_launcher: Could not import Mamba")
    assert E.text_level(ev) == "WARNING"
    assert E.text_level(Event(kinds.MESSAGE, 1, "node01:5646:5646 [0] init.cc:136 NCCL WARN Missing iommu=pt")) == "WARNING"
    assert E.text_level(Event(kinds.MESSAGE, 1, "W0412 10:00:00.1 123 foo.cc:1] slow")) == "WARNING"
    assert E.text_level(Event(kinds.MESSAGE, 1, "the error message can be ignored")) is None
    for noise in ("", "   ", "Capturing batches (bs=4 avail_mem=1.2 GB):  50%|█████     | 2/4 [00:01<00:01,  1.9it/s]",
                  "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:06<00:06,  6.66s/it]"):
        assert E.is_noise(noise)


def test_resource_arithmetic():
    facts = {"mem_fraction": 0.75}
    why = E.arithmetic("Model loading took 15.4668 GiB memory and 230.49 seconds", facts,
                       "OutOfMemoryError: HIP out of memory. GPU 0 has a total capacity of 15.92 GiB of which 0 bytes")
    assert why and "11.94 GiB" in why
    assert "negative" in E.arithmetic("Available KV cache memory: -0.72 GiB", {})
    assert E.arithmetic("Available KV cache memory: 30.5 GiB", {}) is None
    # SGLang after loading: what the weights left free, against what they took
    assert "after the weights" in E.arithmetic("[2025-11-10 08:43:20 TP0] Load weight end. type=GptOssForCausalLM, "
                                               "dtype=torch.bfloat16, avail mem=2.29 GB, mem usage=186.08 GB.", {})
    assert E.arithmetic("[2025-11-10 08:43:20 TP0] Load weight end. type=GptOssForCausalLM, dtype=torch.bfloat16, "
                        "avail mem=32.19 GB, mem usage=158.02 GB.", {}) is None
    # vLLM's CPU worker prints the KV-cache space it set aside as (set/total)
    assert "zero" in E.arithmetic("(Worker pid=36) INFO 08-18 02:57:12 [cpu_worker.py:235] Explicitly set "
                                  "(0.0/11.65) GiB for KV cache on node 0.", {})
    assert E.arithmetic("INFO 08-18 02:57:12 [cpu_worker.py:235] Explicitly set (4.0/11.65) GiB for KV cache "
                        "on node 0.", {}) is None
    assert "at or beyond" in E.arithmetic("Launch DP1 starting at GPU #4.", {"visible": 4})
    assert E.arithmetic("Launch DP1 starting at GPU #2.", {"visible": 4}) is None
    assert E.arithmetic("# GPU blocks: 0, # CPU blocks: 2048", {})


def test_resource_arithmetic_reads_a_unit_in_any_case():
    # The patterns are case-insensitive: "Gb", "gib" are units too (a KeyError once; fuzz/corpus/regress-unit-case-gb.log)
    assert "negative" in E.arithmetic("avail mem=-0.5 Gb", {})
    assert "negative" in E.arithmetic("Available KV cache memory: -1 gib", {})
    why = E.arithmetic("Model loading took 15.4668 gib memory", {"mem_fraction": 0.75, "total_gib": 15.92})
    assert why and "15.47 GiB" in why


@pytest.mark.parametrize("level", ["WARNING", "ERROR"])
def test_a_warning_that_shares_a_phase_markers_phrase_is_still_a_warning(level):
    # "FlashInfer JIT" makes the line a kernel-jit marker too; printed as a warning,
    # it is read as one and linked to the JIT's failure by what both are about (nvcc).
    from helpers import classify_lines

    res = classify_lines([
        "[2025-03-01 10:00:00] server_args=ServerArgs(model_path='x')",
        f"[2025-03-01 10:00:00] {level}: CUDA_HOME is not set; FlashInfer JIT will look for nvcc on PATH",
        "[2025-03-01 10:00:05 TP0] Load weight begin. avail mem=78.00 GB",
        "[2025-03-01 10:00:21 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/flashinfer/jit/cpp_ext.py", line 100, in run_ninja',
        "    subprocess.run(command)",
        "RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist",
    ])
    assert res["root_cause"] == "toolchain.compiler-missing"
    assert [w["line"] for w in res["early_warnings"]] == [2]
    assert "tool:nvcc" in res["early_warnings"][0]["subjects"]


def test_an_info_marker_line_is_no_warning():
    from helpers import classify_lines

    res = classify_lines([
        "[2025-03-01 10:00:00] server_args=ServerArgs(model_path='x')",
        "[2025-03-01 10:00:01 TP0] FlashInfer JIT: building decode kernels with nvcc",
        "[2025-03-01 10:00:21 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/flashinfer/jit/cpp_ext.py", line 100, in run_ninja',
        "    subprocess.run(command)",
        "RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist",
    ])
    assert res["root_cause"] == "toolchain.compiler-missing"
    assert res["early_warnings"] == []


def test_seed_links_the_package_walk_with_why():
    import forensics

    d = forensics.classify(str(SEED1))
    walk = [w for w in d["early_warnings"] if "cutlass.cute.experimental" in w["text"]]
    assert walk, d["early_warnings"]
    w = walk[0]
    assert set(w) >= {"line", "text", "why", "subjects", "score", "lead_seconds", "signature"}
    assert w["line"] == 79 and w["lead_seconds"] == pytest.approx(103.0, abs=1)
    # Linked by the subject it shares with the failure: cutlass's package or, since healthy start-ups
    # print cutlass too (the real healthy baseline), its rarer modules (cutlass.cute, experimental).
    assert re.search(r"same (?:package|module) as the failure: [^;]*cutlass", w["why"]) and "pkg:cutlass" in w["subjects"]
    assert len(d["early_warnings"]) <= 3


def test_text_report_says_why(cli):
    out = cli("classify", str(SEED1)).stdout.decode()
    assert "line 79 (1 min 43 s before): Unexpected error during package walk: cutlass.cute.experimental (" in out
    assert re.search(r"same (?:package|module) as the failure: [^;)]*cutlass", out)


def test_link_without_signatures_on_the_seed():
    from forensics.pipeline import diagnose_source
    from forensics.ingest.sources import Source

    incs: list = []
    res = diagnose_source(Source(str(SEED1), SEED1), use_classifier=False, keep_incidents=incs)
    alone = E.relink(incs[res["incident"]], use_signatures=False)
    assert any("cutlass.cute.experimental" in w["text"] and w["signature"] is None for w in alone)


@needs_real
def test_linking_on_whole_real_logs():
    """Both real early-warning collections plus the project's reproduced
    early-warning logs: linking alone finds >= 80% of the marked warnings of
    detected failures, with precursor signatures >= 90%, and classify lists
    at most 3 per failure on average."""
    r = evaluate_dirs([REAL / "early-warning", REAL / "early-warning-b", CORPORA / "seeds", CORPORA / "cpu",
                       CORPORA / "gpu"])
    ew = r["early_warnings"]
    assert ew["detected"] >= 25
    assert ew["linking_alone_of_detected"] / ew["detected"] >= 0.80, ew
    assert ew["found_of_detected"] / ew["detected"] >= 0.90, ew
    assert ew["mean_listed_per_failure"] <= 3.0


@needs_real
def test_first_real_collection_linking_alone():
    r = evaluate_dirs([REAL / "early-warning"], use_classifier=False)
    ew = r["early_warnings"]
    assert ew["found_by_linking_alone"] / ew["n"] >= 0.80, ew


def test_baseline_loads_and_knows_harmless_warnings():
    base = E.baseline()
    assert base.n_logs >= 100 and len(base.templates) >= 50
    # Healthy SGLang start-ups print these; they are in the baseline.
    assert base.familiar("Unexpected error during package walk: cutlass.cute.experimental")
    assert base.familiar("Ignore import error when loading sglang.srt.models.glmasr: cannot import name "
                         "'GlmAsrConfig' from 'transformers' (/usr/lib/python3/site-packages/transformers/__init__.py)")
    assert not base.familiar("NVIDIA B300 with CUDA capability sm_103 is not compatible with the current PyTorch "
                             "installation.")
    # Rarity: a subject every healthy start-up mentions weighs little.
    assert base.rarity("pkg:torch") < 0.2 < 0.9 < base.rarity("lib:nvrtc")


def test_baseline_is_rebuilt_by_its_script(tmp_path):
    """The shipped baseline is what the script builds from the collections it
    names (all of them once merged; those present here otherwise)."""
    from forensics.lab import ew_baseline

    shipped = json.loads(E.BASELINE_PATH.read_text())
    dirs = [REPO / src for src in shipped["sources"] if (REPO / src).is_dir()]
    assert CORPORA / "generated" in dirs
    out = tmp_path / "b.json"
    assert ew_baseline.main([*map(str, dirs), "--out", str(out)]) == 0
    built = json.loads(out.read_text())
    if len(dirs) == len(shipped["sources"]):
        assert built["templates_by_server"] == shipped["templates_by_server"]
        assert built["subject_df"] == shipped["subject_df"] and built["n_logs"] == shipped["n_logs"]
    else:
        for server, templates in built["templates_by_server"].items():
            assert set(templates) <= set(shipped["templates_by_server"][server])
        assert built["n_logs"] < shipped["n_logs"]
    assert ew_baseline.main([str(REAL / "healthy"), "--out", str(out)]) == 2  # never from the measuring sets


def _live(paths: list[Path]) -> tuple[int, list[tuple[str, dict]]]:
    from forensics.lab.evaluate import read_labels
    from forensics.diagnosis.diagnose import record_hits
    from forensics.diagnosis.signatures import signature_set
    from forensics.events.parser import iter_source_events
    from forensics.incidents.lifetimes import IncidentBuilder
    from forensics.ingest.sources import Source

    sset = signature_set()
    n, flags = 0, []
    for d in paths:
        for row in read_labels(d):
            if row.get("root_cause"):
                continue
            n += 1
            b = IncidentBuilder("-", record_hits(sset))
            announced: set[str] = set()
            cur = None
            for ev in iter_source_events(Source(row["_path"], Path(row["_path"]))):
                list(b.feed(ev))
                if b.cur is not cur:
                    cur, announced = b.cur, set()
                flags += [(row["_path"], w) for w in E.live_early_warnings(b.cur, ev, announced)]
    return n, flags


@needs_real
def test_watch_live_precision_on_healthy_logs():
    n, flags = _live([REAL / "healthy", REAL / "healthy-b", CORPORA / "generated"])
    assert n >= 140
    assert len(flags) <= n / 10, flags
    assert not any(E.is_noise(w["text"]) for _, w in flags)


def test_live_never_prints_blank_or_progress_lines():
    class Hit:  # a precursor signature that (wrongly) matched a progress line
        class signature:
            id = "x"
            predicts = ("gpu.out-of-memory",)

    for text in ("", "Capturing batches (bs=4 avail_mem=1.2 GB):  50%|█████     | 2/4 [00:01<00:01,  1.9it/s]"):
        assert E.live_decision(Event(kinds.LOG, 1, text, level="WARNING"), Hit()) is None


def test_live_prints_what_predicts_a_failure():
    d = E.live_decision(Event(kinds.LOG, 5, "Available KV cache memory: -0.72 GiB", level="INFO"))
    assert d is not None and "negative" in d["why"]
    d = E.live_decision(Event(kinds.LOG, 9, "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with "
                                        "the current PyTorch installation.", level="WARNING"))
    assert d is not None and "env.gpu-arch-unsupported" in d["predicts"]
    assert E.live_decision(Event(kinds.LOG, 9, "Using FLASH_ATTN attention backend.", level="INFO")) is None
    # a native library or a package stated missing, with or without "is" (koboldcpp's OpenBLAS loader)
    d = E.live_decision(Event(kinds.LOG, 2, "Warning: OpenBLAS library file not found. Non-BLAS library will be used.",
                              level="WARNING"))
    assert d is not None and "library file not found" in d["why"], d
    # ... but a library that is found is no news
    assert E.live_decision(Event(kinds.LOG, 2, "Warning: OpenBLAS library file found. BLAS will be used.",
                                 level="WARNING")) is None


def test_a_weak_precursor_is_context_not_news_and_a_familiar_one_speaks_when_its_numbers_trip():
    from forensics.diagnosis.signatures import signature_set

    sigs = {s.id: s for s in signature_set().signatures}

    class Hit:
        def __init__(self, sid: str) -> None:
            self.signature = sigs[sid]

    # Every SGLang start-up skips a few optional model modules: not news, whatever the module
    line = "[2025-12-05 09:18:25 TP0] Ignore import error when loading sglang.srt.models.mindspore: name 'ms' is not defined"
    assert sigs["sglang.ignore-import-error"].strength == "weak"
    assert E.live_decision(Event(kinds.LOG, 3, line), Hit("sglang.ignore-import-error")) is None
    # ... unlike a compiled library that does not load (every model needs it)
    line = ("Ignore import error when loading sglang.srt.models.qwen3_moe: /venv/lib/python3.12/site-packages/"
            "sgl_kernel/common_ops.so: undefined symbol: _ZN3c104cuda9SetDeviceEi")
    assert E.live_decision(Event(kinds.LOG, 3, line), Hit("sglang.ignore-import-error-undefined-symbol")) is not None
    # Healthy vLLM start-ups print the KV-cache budget: the template is familiar, a negative figure is not
    line = "INFO 08-20 10:00:00 [gpu_worker.py:276] Available KV cache memory: -1.81 GiB"
    d = E.live_decision(Event(kinds.LOG, 7, line, level="INFO"), Hit("vllm.negative-kv-cache-memory"))
    assert d is not None and "negative" in d["why"]


def test_a_warning_healthy_runs_print_only_in_one_context_is_news_outside_it():
    # vLLM finds no platform before a platform plugin (vllm-ascend) activates: healthy there,
    # news on a host that loaded no plugin (the device type cannot be inferred next)
    from forensics.diagnosis.early_warnings.context import add_context
    from forensics.diagnosis.signatures import signature_set

    sig = next(s for s in signature_set().signatures if s.id == "vllm.no-platform-detected")

    class Hit:
        signature = sig

    line = "INFO 02-23 00:50:03 __init__.py:187] No platform detected, vLLM is running on UnspecifiedPlatform"
    plugin: dict = {}
    add_context(plugin, "INFO 02-23 00:50:03 __init__.py:42] plugin ascend loaded.")
    assert "plugin:platform" in plugin.get("context", ())
    assert E.live_decision(Event(kinds.LOG, 11, line, level="INFO"), Hit(), plugin) is None
    d = E.live_decision(Event(kinds.LOG, 1, line, level="INFO"), Hit(), {})
    assert d is not None and d["signature"] == "vllm.no-platform-detected"


def test_warnings_healthy_runs_print_too_speak_only_in_their_context():
    # Lines of batches 29-34 that failures and healthy runs both print: llama.cpp's parameter fit
    # when -ngl is set, MLflow's dependency and Python-version notes (context for linking, never
    # news); vLLM's SymmMem capability warning, news on Blackwell only; vLLM 0.12+'s _C import
    # failure, quiet on a host whose platform plugin brings its own ops.
    from forensics.diagnosis.early_warnings.context import add_context
    from forensics.diagnosis.signatures import signature_set

    sigs = {s.id: s for s in signature_set().signatures}

    class Hit:
        def __init__(self, sid: str) -> None:
            self.signature = sigs[sid]

    quiet = [("llamacpp.fit-params-failed", "0.00.747.142 W common_fit_params: failed to fit params to free device "
              "memory: n_gpu_layers already set by user to 99, abort"),
             ("mlflow.model-dependency-mismatch", "2024/07/23 12:35:38 WARNING mlflow.utils.requirements_utils: Detected "
              "one or more mismatches between the model's dependencies and the current Python environment:"),
             ("llamacpp.pipeline-parallelism-copies", "llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)")]
    for sid, line in quiet:
        assert sigs[sid].strength == "weak"
        assert E.live_decision(Event(kinds.LOG, 3, line), Hit(sid), {}) is None
    line = ("(Worker pid=301) WARNING 06-13 20:05:54 [symm_mem.py:66] SymmMemCommunicator: Device capability "
            "{} not supported, communicator is not available.")
    for cap, news in (("8.6", False), ("12.0", True)):
        facts: dict = {}
        add_context(facts, line.format(cap))
        d = E.live_decision(Event(kinds.LOG, 40, line.format(cap)), Hit("vllm.symm-mem-capability-unsupported"), facts)
        assert (d is not None) == news, cap
    line = ("(APIServer pid=13) WARNING 06-29 18:27:06 [interface.py:225] Failed to import from vllm._C: "
            "ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')")
    plugin: dict = {}
    add_context(plugin, "INFO 06-29 18:26:53 [__init__.py:212] Platform plugin neuron is activated")
    assert E.live_decision(Event(kinds.LOG, 96, line), Hit("vllm.import-c-failed-shared-object"), plugin) is None
    assert E.live_decision(Event(kinds.LOG, 96, line), Hit("vllm.import-c-failed-shared-object"), {}) is not None


def test_every_early_warning_has_the_contract_fields():
    from forensics.lab.evaluate import read_labels
    from forensics.pipeline import diagnose_source, load_classifier
    from forensics.ingest.sources import Source

    clf = load_classifier(True)
    keys = {"line", "text", "why", "subjects", "score", "lead_seconds", "signature"}
    seen = 0
    rows = [r for r in read_labels(CORPORA / "generated") if r.get("early_warning_substring")][:60]
    rows += read_labels(CORPORA / "seeds") + read_labels(CORPORA / "gpu")
    for row in rows:
        res = diagnose_source(Source(row["_path"], Path(row["_path"])), classifier=clf)
        for inc in res["incidents"]:
            for w in inc["early_warnings"]:
                seen += 1
                assert keys <= set(w), (row["_path"], w)
                assert isinstance(w["why"], str) and w["why"] and isinstance(w["subjects"], list)
                assert not E.is_noise(w["text"])
    assert seen >= 40


def test_concurrency_below_one_request_links_to_a_kv_cache_failure_after_the_fact_only() -> None:
    # vLLM prints the concurrency in every start-up; below 1x a full-length request cannot fit.
    # After a KV-cache / out-of-memory failure that line is the warning; live, with no failure, it is not.
    from forensics import api
    from forensics.diagnosis.early_warnings import arithmetic
    line = "Maximum concurrency for 29000 tokens per request: 0.82x"
    failure = ("The model's max seq len (29000) is larger than the maximum number of tokens that can be stored "
               "in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`")
    assert arithmetic(line, {}, failure) is not None
    assert arithmetic(line, {}) is None
    assert arithmetic("Maximum concurrency for 29000 tokens per request: 3.40x", {}, failure) is None
    log = ("INFO 05-01 10:00:01 [gpu_model_runner.py:1] Loading model weights took 14.9888 GB\n"
           f"INFO 05-01 10:00:09 [kv_cache_utils.py:1] {line}\n"
           f"ERROR 05-01 10:00:09 [core.py:1] ValueError: {failure} when initializing the engine.\n")
    inc = api.classify_text(log)["incidents"][-1]
    assert inc["root_cause"] == "gpu.out-of-memory"
    assert any("Maximum concurrency" in w["text"] for w in inc["early_warnings"])


def test_the_context_hint_search_finds_what_testing_each_hint_finds():
    """context_tokens' one alternation of the hints answers as testing each
    hint as a substring does (escaped: hints hold '(' and spaces)."""
    import importlib

    ctx = importlib.import_module("forensics.diagnosis.early_warnings.context")
    hints = ctx._hints()
    texts = [f"x{h}y" for h in hints] + [h[:-1] for h in hints] + [h.lower() for h in hints]
    texts += ["(10, 0) capability", "(9, 0)", "Using FlashInfer", "nothing here", "", "B2OO", "ViL"]
    for text in texts:
        assert (ctx._any_hint()(text) is not None) == any(h in text for h in hints), text
