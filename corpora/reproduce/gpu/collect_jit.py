"""Copy run_jit.sh's logs into corpora/gpu, corpora/gpu-early-warning and corpora/gpu-pairs and add
their rows to labels.csv / pairs.csv (rows already there are left alone).

usage: python corpora/reproduce/gpu/collect_jit.py LOGS   (a folder with the logs of run jit-1 (tc-*) and run jit-2 (fi-*),
       from their jit-logs.tar.gz)
The labels below were written from reading the logs, before running forensics on them. Every
substring is checked: fatal and early warning in the failing log (the warning's line first), and
neither the fatal line in the good twin. Logs are copied byte for byte.
"""
import csv
import io
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
C = REPO / "corpora"
MACHINE = "nvidia-h200 (1x H200 143771 MiB, sm_90, driver 580.159.04, torch 2.11.0+cu130, triton 3.6.0, CUDA 13.0)"
SC = "corpora/reproduce/gpu/sc/"
FI = "flashinfer-python 0.5.3 + apache-tvm-ffi 0.1.15.post2 wheels (pip --no-deps --target /tmp/site); " + SC

# run id, folder, corpus id, root_cause, phase, early-warning substring, fatal substring, note, split
ROWS = [
    ("fi-jit-no-ninja", "gpu", "tc-missing-ninja-fi-01", "toolchain.compiler-missing", "kernel-jit", "",
     "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'",
     FI + "fi_decode_sglang.py, GRAPH=0 (--disable-cuda-graph), PATH without ninja (compilers and nvcc kept), CUDA_HOME=/usr/local/cuda-13.0: "
     "FlashInfer's run_ninja cannot start ninja at the first decode plan; SGLang-shaped wrapper (srv.py); run jit-2", "train"),
    ("fi-jit-no-nvcc-graph", "gpu", "tc-missing-nvcc-fi-graph-01", "toolchain.compiler-missing", "cuda-graph-capture", "",
     "/bin/sh: 1: /usr/local/cuda-12.4/bin/nvcc: not found",
     FI + "fi_decode_sglang.py, CUDA_HOME=/usr/local/cuda-12.4 (absent): the first decode plan, at the start of CUDA graph capture, JIT-builds "
     "the kernels and ninja's nvcc steps fail; wrapped as SGLang does (Capture cuda graph failed: Ninja build failed ...), the shape of seed 2; "
     "run jit-2", "test"),
    ("fi-jit-arch-sm80", "gpu", "env-arch-fi-sm80-01", "env.gpu-arch-unsupported", "cuda-graph-capture", "",
     "BatchDecodeWithPagedKVCache failed with error no kernel image is available for execution on the device",
     FI + "fi_decode_sglang.py, FLASHINFER_CUDA_ARCH_LIST=8.0: the JIT build succeeds for sm_80 only, the plan's kernel launch on the sm_90 "
     "H200 fails (tvm-ffi Check failed); run jit-2", "train"),
    ("fi-arch-list-malformed", "gpu", "config-fi-arch-list-01", "config.invalid-argument", "kernel-jit", "",
     "ValueError: too many values to unpack (expected 2)",
     FI + "fi_decode_sglang.py, FLASHINFER_CUDA_ARCH_LIST=9.0a,8.0 (comma; FlashInfer splits on spaces): import flashinfer fails in "
     "CompilationContext (arch.split('.')); UNSURE: label config.invalid-argument (a malformed setting), phase kernel-jit (FlashInfer's "
     "JIT context, imported after the memory pool); run jit-2", "train"),
    ("fi-graph-plan-in-capture", "gpu", "gpu-graph-capture-fi-plan-01", "gpu.cuda-graph-capture", "cuda-graph-capture", "",
     "Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned",
     FI + "fi_decode_sglang.py, PLAN_IN_CAPTURE=1: BatchDecodeWithPagedKVCacheWrapper.plan called inside torch.cuda.graph with a device "
     "indptr; plan copies it to the host (indptr.to('cpu')) and torch refuses during capture; kernels from the healthy run's JIT cache; "
     "run jit-2", "test"),
    ("tc-inductor-no-cc", "gpu", "tc-missing-cc-inductor-01", "toolchain.compiler-missing", "kernel-jit", "",
     "torch._inductor.exc.InductorError: FileNotFoundError: [Errno 2] No such file or directory: '/usr/bin/gcc-14'",
     SC + "inductor_mlp_vllm.py, CC=/usr/bin/gcc-14 CXX=/usr/bin/g++-14 (not installed), fresh inductor/Triton caches: Triton builds its "
     "CUDA driver stub with CC while inductor generates the first kernel; inductor's TF32 UserWarning first (harmless, also in the twin); "
     "vLLM-shaped wrapper (EngineCore failed to start, CRLF headers); run jit-1", "train"),
    ("tc-inductor-cpu-no-cxx", "gpu", "tc-missing-cxx-inductor-cpu-01", "toolchain.compiler-missing", "kernel-jit", "",
     "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx",
     SC + "inductor_mlp_vllm.py DEVICE=cpu, CC/CXX as tc-missing-cc-inductor-01: inductor's C++ backend finds no working compiler while "
     "probing the CPU's vector ISA; run jit-1", "test"),
    ("tc-autotune-oor-fp32", "gpu-early-warning", "gpu-ew-autotune-oor", "toolchain.compile-failed", "kernel-jit",
     "Autotuning failed with out of resource: shared memory",
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 524288",
     SC + "triton_autotune_sglang.py, DTYPE=float32, TRITON_PRINT_AUTOTUNING=1: all four configs dropped for shared memory, the autotuner "
     "keeps the first and its launch raises OutOfResources; early warning MODERATE (the twin, bfloat16, prints the same warning for one "
     "config and serves); label as tc-compile-triton-oor-01 (UNSURE, alternative config.invalid-argument: the dtype); the wrapper's "
     "'Load weight end ... dtype=torch.bfloat16' is the wrapper's fixed text; twin corpora/gpu-pairs/gpu-pair-autotune-oor-good.log; run jit-1",
     "train"),
    ("tc-dynamo-recompile-bad", "gpu-early-warning", "gpu-ew-dynamo-recompile", "toolchain.compile-failed", "kernel-jit",
     "Graph break from `Tensor.item()`, consider setting:",
     "torch._dynamo.exc.FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit",
     SC + "dynamo_recompile_vllm.py bad, TORCH_LOGS=graph_breaks,recompiles, fail_on_recompile_limit_hit=True: a graph break in every "
     "layer (.item()), dynamic=False, a new batch size every step: 11 recompiles, then the limit (8) is an error; early warning MODERATE "
     "(the graph-break storm; the twin, dynamic shapes, prints the same graph breaks and 6 recompiles and serves); UNSURE: label "
     "toolchain.compile-failed (torch.compile gave up), alternative config.invalid-argument; twin "
     "corpora/gpu-pairs/gpu-pair-dynamo-recompile-good.log; run jit-1", "test"),
]
# pair key, good run id, bad run id, root_cause, change, early-warning substring, fatal substring, script
PAIRS = [
    ("fi-no-nvcc-graph", "fi-jit-healthy", "fi-jit-no-nvcc-graph", "toolchain.compiler-missing",
     "CUDA_HOME=/usr/local/cuda-12.4 (absent) vs unset (nvcc 13.0 found on PATH); FlashInfer 0.5.3 JIT", "",
     "/bin/sh: 1: /usr/local/cuda-12.4/bin/nvcc: not found", "fi_decode_sglang.py"),
    ("fi-arch-sm80", "fi-jit-healthy", "fi-jit-arch-sm80", "env.gpu-arch-unsupported",
     "FLASHINFER_CUDA_ARCH_LIST=8.0 vs unset (sm_90a from the device)", "",
     "BatchDecodeWithPagedKVCache failed with error no kernel image is available for execution on the device", "fi_decode_sglang.py"),
    ("fi-arch-list-malformed", "fi-jit-healthy", "fi-arch-list-malformed", "config.invalid-argument",
     "FLASHINFER_CUDA_ARCH_LIST=9.0a,8.0 (comma) vs unset", "", "ValueError: too many values to unpack (expected 2)", "fi_decode_sglang.py"),
    ("fi-plan-in-capture", "fi-jit-healthy", "fi-graph-plan-in-capture", "gpu.cuda-graph-capture",
     "PLAN_IN_CAPTURE=1 (decode plan inside torch.cuda.graph, device indptr) vs plan before capture (host indptr); the bad run "
     "reused the good run's JIT cache", "",
     "Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned", "fi_decode_sglang.py"),
    ("inductor-no-cc", "tc-inductor-healthy", "tc-inductor-no-cc", "toolchain.compiler-missing",
     "CC=/usr/bin/gcc-14 CXX=/usr/bin/g++-14 (not installed) vs unset; both print inductor's TF32 UserWarning", "",
     "torch._inductor.exc.InductorError: FileNotFoundError: [Errno 2] No such file or directory: '/usr/bin/gcc-14'", "inductor_mlp_vllm.py"),
    ("inductor-cpu-no-cxx", "tc-inductor-cpu-healthy", "tc-inductor-cpu-no-cxx", "toolchain.compiler-missing",
     "DEVICE=cpu; CC=/usr/bin/gcc-14 CXX=/usr/bin/g++-14 (not installed) vs unset", "",
     "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx", "inductor_mlp_vllm.py"),
    ("autotune-oor", "tc-autotune-oor-bf16", "tc-autotune-oor-fp32", "toolchain.compile-failed",
     "DTYPE=float32 vs bfloat16; the early warning (Autotuning failed with out of resource: shared memory) is printed by both, "
     "for 4 configs vs 1, so it is not new in bad (see corpora/gpu-early-warning/labels.csv gpu-ew-autotune-oor)", "",
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 524288", "triton_autotune_sglang.py"),
    ("dynamo-recompile", "tc-dynamo-recompile-good", "tc-dynamo-recompile-bad", "toolchain.compile-failed",
     "torch.compile dynamic=False vs default (automatic dynamic shapes); both print the graph-break storm and recompiles, so the "
     "early warning is not new in bad (see gpu-ew-dynamo-recompile)", "",
     "torch._dynamo.exc.FailOnRecompileLimitHit: Hard failure due to fail_on_recompile_limit_hit", "dynamo_recompile_vllm.py"),
]

# one healthy FlashInfer run is the good twin of four pairs: kept once
SHARED_GOOD = {"fi-jit-healthy": "gpu-pair-fi-jit-good.log"}


def check(text, sub, what, rid):
    if sub and sub not in text:
        sys.exit(f"{rid}: {what} substring not in the log: {sub!r}")


def line_of(text, sub):
    return next(i for i, ln in enumerate(text.splitlines()) if sub in ln) if sub else -1


def add_rows(path, header, rows, key="id"):
    have = {r[key] for r in csv.DictReader(path.open(encoding="utf-8"))} if path.exists() else set()
    new = [r for r in rows if r[key] not in have]
    if not new:
        return 0
    text = path.read_bytes().decode("utf-8")
    buf = io.StringIO()  # the file's own line ends (the early-warning tables were written with \r\n)
    w = csv.DictWriter(buf, fieldnames=header, lineterminator="\r\n" if "\r\n" in text else "\n")
    for r in new:
        w.writerow(r)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(text + buf.getvalue())
    return len(new)


PAIR_HEADER = ["id", "root_cause", "good", "bad", "change", "early_warning_substring", "fatal_substring", "script", "run"]



def add_context(logs, pairs, context):
    """Check that both logs of each context pair print the warning they share, and add the pairs to
    gpu-pairs/context-warnings.csv (``context``: (pair id, the shared warning, what decides))."""
    src_of = {f"gpu-pair-{k}": (good, bad) for k, good, bad, *_ in pairs}
    for pid, warning, _ in context:
        for src in src_of[pid]:
            check((logs / f"{src}.log").read_text(errors="replace"), warning, "shared warning", pid)
    rows = [dict(pair=p, warning_in_both=w, what_decides=d) for p, w, d in context]
    return add_rows(C / "gpu-pairs" / "context-warnings.csv", ["pair", "warning_in_both", "what_decides"], rows, key="pair")


LABEL_HEADER = ["id", "root_cause", "phase", "early_warning_substring", "fatal_substring", "provenance", "note", "verdict", "split"]


def add_labels(per):
    """Add each folder's new rows (``copy_failures``'s result) to its labels.csv."""
    for folder, rows in per.items():
        print(folder, add_rows(C / folder / "labels.csv", LABEL_HEADER, rows), "rows added")


def copy_failures(logs, rows, run_of):
    """Check and copy each failing log of ``rows`` byte for byte; return its labels.csv rows by folder.
    ``run_of(src)`` names the run the log came from (appended to the note)."""
    per = {"gpu": [], "gpu-early-warning": []}
    for src, folder, cid, cause, phase, ew, fatal, note, split in rows:
        data = (logs / f"{src}.log").read_bytes()
        text = data.decode(errors="replace")
        check(text, fatal, "fatal", src)
        check(text, ew, "early-warning", src)
        if ew and line_of(text, ew) >= line_of(text, fatal):
            sys.exit(f"{src}: early warning is not before the fatal line")
        (C / folder / f"{cid}.log").write_bytes(data)
        per[folder].append(dict(id=cid, root_cause=cause, phase=phase, early_warning_substring=ew, fatal_substring=fatal,
                                provenance="reproduced", note=f"{note}; {run_of(src)}", verdict="failed", split=split))
    return per

def write_pairs(logs, pairs, shared_good, run_of, good_twin_ok=lambda key, text, fatal, ew: fatal not in text):
    """Copy each (good, bad) run into corpora/gpu-pairs byte for byte and add its pairs.csv row;
    stop if the good twin shows the failure (``good_twin_ok``) or a substring is not in the bad one."""
    prows = []
    for key, good, bad, cause, change, ew, fatal, script in pairs:
        gdata, bdata = ((logs / f"{x}.log").read_bytes() for x in (good, bad))
        if not good_twin_ok(key, gdata.decode(errors="replace"), fatal, ew):
            sys.exit(f"{key}: the fatal line (or the new early warning) is in the good twin too")
        btext = bdata.decode(errors="replace")
        check(btext, fatal, "fatal", key)
        if ew:
            check(btext, ew, "early-warning", key)
        gname = shared_good.get(good, f"gpu-pair-{key}-good.log")
        (C / "gpu-pairs" / gname).write_bytes(gdata)
        (C / "gpu-pairs" / f"gpu-pair-{key}-bad.log").write_bytes(bdata)
        prows.append(dict(id=f"gpu-pair-{key}", root_cause=cause, good=gname, bad=f"gpu-pair-{key}-bad.log", change=change,
                          early_warning_substring=ew, fatal_substring=fatal, script=SC + script, run=run_of(good, bad)))
    print("gpu-pairs", add_rows(C / "gpu-pairs" / "pairs.csv", PAIR_HEADER, prows), "pairs added")

def main(logs):
    add_labels(copy_failures(logs, ROWS, lambda src: MACHINE))
    write_pairs(logs, PAIRS, SHARED_GOOD, lambda good, bad: "jit-2" if bad.startswith("fi-") else "jit-1")

if __name__ == "__main__":
    main(Path(sys.argv[1]))
