# A GPU filled to the last megabyte by a memory pool (as a server sized with a high memory fraction does),
# then the first cuBLAS matmul or cuDNN convolution: the library creates its handle after the fill (WARM=0)
# or before it (WARM=1). The pool keeps a 64 MiB spare block that torch's allocator can hand out.
# Lines with "[repro]" are this script's own.  Knobs: OP=matmul|conv  WARM=0|1
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

E = os.environ.get
OP, WARM = E("OP", "matmul"), E("WARM", "0") == "1"
say(f"torch {torch.__version__} cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()} op={OP} warm={WARM}")
a = torch.randn(2048, 2048, device="cuda", dtype=torch.half)
img = torch.randn(8, 64, 128, 128, device="cuda", dtype=torch.half)
wt = torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.half)


def step():
    return (a @ a).float().sum().item() if OP == "matmul" else F.conv2d(img, wt, padding=1).float().sum().item()


if WARM:
    say(f"warmup {OP}: {step():.3e}")
pool, size = [], 1 << 30
spare = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
while size >= (1 << 20):
    try:
        pool.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        size //= 2
free, total = torch.cuda.mem_get_info()
say(f"memory pool: {sum(t.numel() for t in pool) / 2**30:.2f} GiB in {len(pool)} blocks; free {free / 2**20:.1f} MiB of {total / 2**30:.1f} GiB")
del spare
say(f"first {OP} after the pool")
say(f"{OP}: {step():.3e}")
