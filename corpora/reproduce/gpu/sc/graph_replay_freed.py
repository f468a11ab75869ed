# A decode step captured in a CUDA graph reads a KV-style pool allocated before the capture. OFFLOAD=1: on
# idle the pool is dropped to save GPU memory (del + torch.cuda.empty_cache(), as a sleep/offload mode
# does) and the graph is replayed afterwards; OFFLOAD=0 keeps the pool. "[repro]" lines are this script's.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

D = 4096
pool = torch.randn(1 << 28, device="cuda", dtype=torch.bfloat16)  # 512 MiB, its own allocator segment
w = torch.randn(D, D, device="cuda", dtype=torch.bfloat16)
q = torch.randn(64, D, device="cuda", dtype=torch.bfloat16)


def decode():
    kv = pool.view(-1, D)[:8192]
    return (q @ kv.T).softmax(-1) @ kv @ w


s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    decode()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    out = decode()
g.replay()
torch.cuda.synchronize()
say(f"torch {torch.__version__}; decode graph captured and replayed once; reserved "
    f"{torch.cuda.memory_reserved() / (1 << 20):.0f} MiB")
if os.environ.get("OFFLOAD", "1") == "1":
    del pool
    torch.cuda.empty_cache()
    say(f"idle: KV pool released, reserved {torch.cuda.memory_reserved() / (1 << 20):.0f} MiB")
for i in range(3):
    g.replay()
    torch.cuda.synchronize()
    say(f"request {i}: {out.float().abs().mean().item():.4f}")
say("done")
