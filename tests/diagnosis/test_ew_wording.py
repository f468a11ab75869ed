"""Wording any program uses to say a failure will follow (``early_warnings/wording.yaml``):
every class's examples, and what ``watch`` does with such a line -- news where healthy
start-ups do not print it, at any level where the class says so, quiet where they do."""
from __future__ import annotations

import pytest

import forensics.diagnosis.early_warnings.live as live_module
from forensics.diagnosis.early_warnings.baseline import Baseline
from forensics.diagnosis.early_warnings.candidates import coarse_template, template
from forensics.diagnosis.early_warnings.live import _wording, live_decision, wording_class
from forensics.events import types as kinds
from forensics.events.tables import load_table
from forensics.events.types import Event

EMPTY = Baseline(frozenset(), {}, {}, 0)
CLASSES = load_table(live_module.__file__, "wording.yaml")["classes"]
CASES = [(c["id"], t, True) for c in CLASSES for t in c["examples"]["match"]] + \
        [(c["id"], t, False) for c in CLASSES for t in c["examples"]["no_match"]]


@pytest.mark.parametrize("cid,text,hit", CASES)
def test_every_example(cid: str, text: str, hit: bool) -> None:
    got = wording_class(text)
    assert (got is not None and got[0] == cid) is hit, (cid, text)


def test_classes_name_labels_and_are_unique() -> None:
    ids = [c[0] for c in _wording()]
    assert len(ids) == len(set(ids))
    assert all(isinstance(c[2], tuple) and c[4] for c in _wording())


def test_a_shortfall_is_news_at_any_level_unless_healthy_runs_print_it() -> None:
    line = "    runnable due to low free GPU memory."
    d = live_decision(Event(kinds.MESSAGE, 3, line), base=EMPTY)
    assert d is not None and d["predicts"] == ["gpu.out-of-memory"] and "memory-shortfall" in d["why"]
    familiar = Baseline(frozenset(), {}, {}, 10, frozenset({coarse_template(line)}))
    assert live_decision(Event(kinds.MESSAGE, 3, line), base=familiar) is None


def test_llama_cpp_fit_failure_is_live_where_healthy_runs_of_the_family_are_unknown() -> None:
    line = ("0.00.747.142 W common_fit_params: failed to fit params to free device memory: "
            "n_gpu_layers already set by user to 99, abort")
    d = live_decision(Event(kinds.LOG, 3, line), base=EMPTY)
    assert d is not None and d["predicts"] == ["gpu.out-of-memory"]


def test_a_cpu_only_host_is_no_driver_error() -> None:
    ok = ("I0101 00:00:00.000000 1 cuda_memory_manager.cc:101] Failed to initialize CUDA memory manager: "
          "unable to get number of CUDA devices: no CUDA-capable device is detected")
    bad = ok.replace("no CUDA-capable device is detected", "unknown error")
    assert wording_class(ok) is None
    d = live_decision(Event(kinds.LOG, 3, bad), base=EMPTY)
    assert d is not None and d["predicts"] == ["env.driver-too-old"]


def test_a_stated_consequence_predicts_what_its_subjects_are_about() -> None:
    line = ("The model class DeepseekV3ForCausalLM has not defined `packed_modules_mapping`, "
            "this may lead to incorrect mapping of quantized or ignored modules")
    d = live_decision(Event(kinds.LOG, 3, line, level="WARNING"), base=EMPTY)
    assert d is not None and "consequence-stated" in d["why"] and "config.model-load" in d["predicts"]
    # at INFO it is the program's note, not a warning
    assert live_decision(Event(kinds.LOG, 3, line, level="INFO"), base=EMPTY) is None


def test_an_older_gpu_without_an_optional_communicator_is_no_news() -> None:
    old = "SymmMemCommunicator: Device capability 8.6 not supported, communicator is not available."
    assert live_decision(Event(kinds.LOG, 3, old, level="WARNING"), base=EMPTY) is None
    new = old.replace("8.6", "12.0")
    d = live_decision(Event(kinds.LOG, 3, new, level="WARNING"), base=EMPTY)
    assert d is not None and d["predicts"] == ["env.gpu-arch-unsupported"]


def test_a_class_that_reads_figures_is_news_where_healthy_runs_print_its_words_with_other_figures() -> None:
    # A healthy Ampere start-up prints the 8.6 line: with figures masked, the baseline knows the
    # 12.0 line's shape too. The class reads the figure; the baseline cannot vouch for it.
    old = "SymmMemCommunicator: Device capability 8.6 not supported, communicator is not available."
    new = old.replace("8.6", "12.0")
    healthy = Baseline(frozenset({template(old)}), {}, {}, 10, frozenset({coarse_template(old)}))
    assert healthy.familiar(new) and healthy.usual(template(new))
    d = live_decision(Event(kinds.LOG, 3, new, level="WARNING"), base=healthy)
    assert d is not None and d["predicts"] == ["env.gpu-arch-unsupported"]
    assert live_decision(Event(kinds.LOG, 3, old, level="WARNING"), base=healthy) is None
    # a class that does not read figures stays quiet where healthy runs print its words
    line = "    runnable due to low free GPU memory."
    quiet = Baseline(frozenset(), {}, {}, 10, frozenset({coarse_template(line)}))
    assert live_decision(Event(kinds.MESSAGE, 3, line), base=quiet) is None


def test_every_match_holds_a_hint() -> None:
    for c in CLASSES:
        for t in c["examples"]["match"]:
            assert any(h in t.lower() for h in c["hints"]), (c["id"], t)
            assert all(h == h.lower() for h in c["hints"])


def test_an_amd_gpu_run_with_another_generations_isa_is_news_at_any_level() -> None:
    line = "  Device 0: AMD Radeon RX 9070 XT, gfx1100 (0x1100), VMM: no, Wave Size: 32"
    d = live_decision(Event(kinds.MESSAGE, 3, line), base=EMPTY)
    assert d is not None and "isa-of-another-generation" in d["why"] and "gpu.illegal-access" in d["predicts"]
    same = "  Device 0: AMD Radeon RX 6700 XT, gfx1030 (0x1030), VMM: no, Wave Size: 32"
    assert live_decision(Event(kinds.MESSAGE, 3, same), base=EMPTY) is None


def test_a_refused_allocation_is_news_live_and_a_fatal_one_is_no_class() -> None:
    from forensics.diagnosis.early_warnings.live import live_decision
    from forensics.events import types as kinds
    from forensics.events.types import Event

    # LMCache v1's local CPU backend, at WARNING: the engine goes on; what it could not place runs out next
    line = ("[2026-01-01 00:00:00,000] LMCache WARNING: Failed to allocate memory for tensor(torch.Size([2, 32, 16, "
            "128]), torch.bfloat16) because no memory is available")
    got = live_decision(Event(kinds.LOG, 5, line, None, level="WARNING"))
    assert got is not None and "allocation-refused" in got["why"] and "gpu.out-of-memory" in got["predicts"]
    assert wording_class("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB") is None


def test_a_status_name_of_several_words_is_a_refused_allocation() -> None:
    # the status name alone, as a pool's warning carries it: CNMeM's and the CUDA driver's names have
    # more than one word before _OUT_OF_MEMORY
    for name in ("CNMEM_STATUS_OUT_OF_MEMORY", "CUDA_ERROR_OUT_OF_MEMORY"):
        got = wording_class(f"W0101 00:00:00.000000 1 memory.cc:212] pool exhausted: {name}, falling back")
        assert got is not None and got[0] == "allocation-refused", name
    assert wording_class("W0101 memory.cc:212] cuda_out_of_memory_handler installed") is None


def test_a_failed_health_check_of_a_running_server_is_news_live_and_one_that_could_not_connect_is_not() -> None:
    # SGLang's model gateway probing a worker that was serving (fix-ew3): the worker stopped answering
    line = ("2025-12-04 16:22:37  WARN sgl_model_gateway::core::worker: /sgl-workspace/sglang/sgl-router/src/core/"
            "worker.rs:784: HTTP health check failed for http://10.194.129.138:30026")
    got = live_decision(Event(kinds.MESSAGE, 9, line), base=EMPTY)
    assert got is not None and "health-check-failed" in got["why"] and got["predicts"] == ["hang.timeout"]
    # the same gateway at start-up, the worker not listening yet: its probe could not connect
    starting = ("2025-12-13 18:40:40  WARN sgl_model_gateway::workflow::event: event.rs:145: Step failed "
                "step_id=detect_connection_mode error=\"Step failed: detect_connection_mode - Both HTTP and gRPC "
                "health checks failed for http://10.0.0.1:30025: HTTP: Health check failed: error sending request "
                "for url (http://10.0.0.1:30025/health)\"")
    assert wording_class(starting) is None
