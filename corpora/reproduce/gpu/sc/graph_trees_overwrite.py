# torch.compile(mode="reduce-overhead") (inductor with CUDA graph trees) on a small bf16 MLP, called once per
# request; the caller keeps each call's output in a list and reads them all at the end (KEEP=ref), or clones
# each output first (KEEP=clone). "[repro]" lines are this script's own.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

KEEP = os.environ.get("KEEP", "ref")
D = 1024
mlp = torch.nn.Sequential(torch.nn.Linear(D, 4 * D), torch.nn.GELU(), torch.nn.Linear(4 * D, D)).to(
    "cuda", torch.bfloat16).eval()
step = torch.compile(mlp, mode="reduce-overhead")
say(f"torch {torch.__version__}; serving 6 requests through torch.compile(mode='reduce-overhead'), keep={KEEP}")
outs = []
with torch.no_grad():
    for i in range(6):
        x = torch.randn(16, D, device="cuda", dtype=torch.bfloat16)
        y = step(x)
        outs.append(y.clone() if KEEP == "clone" else y)
        say(f"request {i} done")
    total = torch.stack(outs).float().mean().item()
say(f"ready: mean of all outputs {total:.5f}")
