"""Early warnings the linker used to drop (issue 28): a precursor that predicts
another label than the failure's, a failure line the process survived because
the tool wrote it as a ``[WARN]``, Ollama's host memory against the weights it
puts on the CPU; and the held-out baseline the lab scores families with."""
from __future__ import annotations

import importlib

from forensics import api
from forensics.diagnosis import early_warnings as E

B = importlib.import_module("forensics.diagnosis.early_warnings.baseline")  # (the package re-exports a function of that name)


def _warnings(log: str) -> tuple[str | None, list[dict]]:
    inc = api.classify_text(log)["incidents"][-1]
    return inc["root_cause"], inc["early_warnings"]


def test_ollama_weights_on_the_cpu_above_the_free_system_memory() -> None:
    facts: dict = {}
    E.candidates._read_facts(facts, 'time=2026-01-04T09:59:31.287Z level=INFO source=device.go:245 '
                                    'msg="model weights" device=CPU size="4.1 GiB"')
    assert facts["cpu_weights_gib"] == 4.1
    line = ('time=2026-01-04T09:59:31.155Z level=INFO source=sched.go:443 msg="system memory" total="7.0 GiB" '
            'free="1.3 GiB" free_swap="6.0 GiB"')
    why = E.arithmetic(line, facts)
    assert why and "4.10 GiB" in why and "1.30 GiB" in why
    assert E.arithmetic(line.replace('free="1.3 GiB"', 'free="5.3 GiB"'), facts) is None
    assert E.arithmetic(line, {}) is None  # without the weights' size there is nothing to compare
    # weights on the GPU ask nothing of host memory
    gpu: dict = {}
    E.candidates._read_facts(gpu, 'msg="model weights" device=CUDA0 size="4.1 GiB"')
    assert "cpu_weights_gib" not in gpu


def test_a_precursor_of_another_label_is_still_listed() -> None:
    # Early Ollama on a CPU without AVX loads a GPU runner built with it: SIGILL. The precursor
    # predicts that failure (no taxonomy label: unknown), whatever label the crash gets.
    log = ("2024/01/25 10:14:54 cpu_common.go:18: INFO CPU does not have vector extensions\n"
           "loading library /tmp/ollama1/cuda_v11/libext_server.so\n"
           "SIGILL: illegal instruction\n")
    _label, warnings = _warnings(log)
    assert [w["signature"] for w in warnings] == ["ollama.cpu-without-vector-extensions"]
    assert "predicts unknown" in warnings[0]["why"]


def test_a_catch_all_precursor_of_another_label_adds_nothing() -> None:
    from forensics.diagnosis.early_warnings.linking import catch_all
    from forensics.diagnosis.signatures import signature_set

    sigs = {s.id: s for s in signature_set().signatures}
    assert catch_all(sigs["nccl.warn-line"]) and not catch_all(sigs["ollama.cpu-without-vector-extensions"])


def test_a_failure_line_written_as_a_bracketed_warning_that_the_process_survived() -> None:
    # A GPU-sharing shim warns that a synchronising call was made while a stream was capturing;
    # the process dies two lines later at the CUDA error. The shim's line warned first.
    log = ("[NVSHARE][INFO]: Successfully initialized nvshare GPU\n"
           "[NVSHARE][WARN]: cuCtxSynchronize returned CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: operation not "
           "permitted when stream is capturing\n"
           "ggml_cuda_compute_forward: IM2COL_3D failed\n"
           "CUDA error: operation not permitted when stream is capturing\n")
    label, warnings = _warnings(log)
    assert label == "gpu.cuda-graph-capture"
    assert [w["line"] for w in warnings] == [2]
    assert warnings[0]["signature"] == "cuda.stream-capture-unsupported-warning"


def test_the_lab_can_hold_a_family_out_of_the_baseline() -> None:
    shipped = E.baseline()
    empty = B.from_data({"templates_by_server": {}, "subject_df": {}, "n_logs": 0})
    token = B.HELD_OUT.set(empty)
    try:
        assert E.baseline() is empty and B.baseline() is empty
        assert not E.baseline().familiar("Unexpected error during package walk: cutlass.cute.experimental")
    finally:
        B.HELD_OUT.reset(token)
    assert E.baseline() is shipped
    assert shipped.familiar("Unexpected error during package walk: cutlass.cute.experimental")


def test_a_line_a_precursor_names_is_no_noise() -> None:
    # Python prints a warning's source line under it; a paste that starts mid-banner keeps only that
    # line, which looks like code (noise) but is what torch's compiler-version precursor names.
    log = ("  warnings.warn(WRONG_COMPILER_WARNING.format(\n"
           "Emitting ninja build file /root/.cache/torch_extensions/py312_cu128/ext/build.ninja...\n"
           "Building extension module ext...\n"
           "FAILED: ext.cuda.o\n"
           "ninja: build stopped: subcommand failed.\n"
           "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n")
    _label, warnings = _warnings(log)
    assert any("WRONG_COMPILER_WARNING" in w["text"] for w in warnings)
    assert E.is_noise("  warnings.warn(WRONG_COMPILER_WARNING.format(")
