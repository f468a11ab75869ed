# FlashInfer (JIT-built kernels) as SGLang's decode attention backend, with CUDA graph capture.
# The environment decides what breaks: no ninja on PATH, CUDA_HOME pointing nowhere, a wrong
# FLASHINFER_CUDA_ARCH_LIST; PLAN_IN_CAPTURE=1 calls the decode plan inside the graph capture with
# a device indptr (plan copies it to the host); GRAPH=0 is --disable-cuda-graph (JIT at warm-up).
# As in SGLang, the wrapper's plan runs at the start of each batch size's capture, so the first
# plan (and the JIT build of the kernels) happens in the "Capture cuda graph" phase.
import os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import SGLang, SGLANG_CAPTURE_FAILED_MSG

GRAPH = os.environ.get("GRAPH", "1") == "1"
PLAN_IN_CAPTURE = os.environ.get("PLAN_IN_CAPTURE", "0") == "1"
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", attention_backend="flashinfer",
           disable_cuda_graph=not GRAPH, cuda_graph_max_bs=8, mem_fraction_static=0.3)
import torch
s.start()
HQ, HKV, D, PAGE, NPAGES = 32, 8, 128, 16, 4096
BS_LIST = [8, 4, 2, 1]
graphs = []


def batch(bs, pages_per_seq=5):
    indptr = torch.arange(0, bs + 1, dtype=torch.int32) * pages_per_seq
    indices = torch.arange(0, bs * pages_per_seq, dtype=torch.int32)
    last = torch.full((bs,), 7, dtype=torch.int32)
    return indptr, indices, last


def run_decode(flashinfer, wrapper, kv, bs, plan_args=None):
    if plan_args is not None:
        wrapper.plan(*plan_args, HQ, HKV, D, PAGE, q_data_type=torch.bfloat16, kv_data_type=torch.bfloat16)
    q = torch.randn(bs, HQ, D, dtype=torch.bfloat16, device="cuda")
    return wrapper.run(q, kv)


def capture(flashinfer, kv, ws):
    s.graph_begin(torch)
    t = time.time()
    pool = torch.cuda.graph_pool_handle()
    cap = torch.cuda.Stream()
    for bs in BS_LIST:
        ip, ix, last = batch(bs)
        ip_buf = torch.empty(bs + 1, dtype=torch.int32, device="cuda")
        ix_buf = torch.empty(NPAGES, dtype=torch.int32, device="cuda")
        last_buf = torch.empty(bs, dtype=torch.int32, device="cuda")
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            ws, "NHD", use_cuda_graph=True, paged_kv_indptr_buffer=ip_buf,
            paged_kv_indices_buffer=ix_buf, paged_kv_last_page_len_buffer=last_buf)
        args = (ip.cuda(), ix.cuda(), last.cuda()) if PLAN_IN_CAPTURE else (ip, ix.cuda(), last)
        w.plan(*args, HQ, HKV, D, PAGE, q_data_type=torch.bfloat16, kv_data_type=torch.bfloat16)
        with torch.cuda.stream(cap):
            for _ in range(2):
                run_decode(flashinfer, w, kv, bs)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph(); graphs.append(g)
        with torch.cuda.graph(g, pool=pool, stream=cap):
            run_decode(flashinfer, w, kv, bs, args if PLAN_IN_CAPTURE else None)
    s.graph_end(torch, t)


try:
    s.init_dist(torch)
    s.load_begin(torch)
    before = torch.cuda.mem_get_info()[0]
    weights = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")
    s.load_end(torch, before)
    kv = torch.randn(NPAGES, 2, PAGE, HKV, D, dtype=torch.bfloat16, device="cuda")
    s.kv(torch, NPAGES * PAGE, kv.numel() * 2 // 2)
    import flashinfer
    ws = torch.empty(128 << 20, dtype=torch.uint8, device="cuda")
    if GRAPH:
        try:
            capture(flashinfer, kv, ws)
        except Exception as e:
            raise Exception(f"Capture cuda graph failed: {e}\n{SGLANG_CAPTURE_FAILED_MSG}")
    else:
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
        ip, ix, last = batch(1)
        run_decode(flashinfer, w, kv, 1, (ip, ix.cuda(), last))
    s.ready()
    torch.cuda.synchronize()
except Exception:
    s.fail()
