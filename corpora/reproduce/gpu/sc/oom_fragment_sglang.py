# gpu.out-of-memory from fragmentation: the KV pool is asked for after a warm-up that left the caching
# allocator's 20 MiB segments each holding one live 6 MiB block (two of three freed). The memory is
# free in total but not contiguous: torch's OOM message says how much is "reserved by PyTorch but
# unallocated" and suggests expandable_segments. Sizes follow the
# free memory, so the scenario needs the GPU to itself.
# Run 1 showed expandable_segments:True does NOT save it (the holes stay mapped): kept as its own
# failure (gpu-oom-fragment-expandable); the good twin asks a KV pool that fits (MEM_FRAC=0.08).
import os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import SGLang, gib
s = SGLang(model_path="meta-llama/Llama-3.1-8B-Instruct", mem_fraction_static=float(os.environ.get("MEM_FRAC", "0.45")))
import torch
s.start()
try:
    s.init_dist(torch)
    torch.cuda.set_device(0)
    s.load_begin(torch)
    free0, total = torch.cuda.mem_get_info()
    b = free0
    w = [torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    s.load_end(torch, b)
    s.log.info("Warm-up: profiling activations with many small buffers")
    blk = 6 << 20
    n = int(torch.cuda.mem_get_info()[0] * 0.80) // blk
    bufs = [torch.empty(blk, dtype=torch.uint8, device="cuda") for _ in range(n)]
    keep = bufs[::3]
    del bufs
    st = torch.cuda.memory_stats()
    s.log.info(f"Warm-up end. allocated={gib(torch.cuda.memory_allocated()):.2f} GB, reserved={gib(torch.cuda.memory_reserved()):.2f} GB, "
               f"avail mem={gib(torch.cuda.mem_get_info()[0]):.2f} GB, segments={st.get('segment.all.current', 0)}")
    kvb = int(gib(total) * s.args["mem_fraction_static"] * (1 << 30)) // 2
    s.log.info(f"Allocating KV cache: 2 x {gib(kvb):.2f} GB (mem_fraction_static={s.args['mem_fraction_static']})")
    k = torch.empty(kvb, dtype=torch.uint8, device="cuda"); v = torch.empty(kvb, dtype=torch.uint8, device="cuda")
    s.kv(torch, kvb // (32 * 8 * 128 * 2), kvb)
    s.ready(kvb // (32 * 8 * 128 * 2))
except Exception:
    s.fail()
