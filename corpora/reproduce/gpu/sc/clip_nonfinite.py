# A training step whose loss overflows in float16: gradient clipping with error_if_nonfinite=True (as
# training scripts set it to stop on a bad step). DTYPE=float16 overflows (the loss passes 65504);
# DTYPE=bfloat16 holds the same values. Lines with "[repro]" are this script's own.
# Knobs: DTYPE=float16|bfloat16  SCALE=x
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

dtype = getattr(torch, os.environ.get("DTYPE", "float16"))
scale = float(os.environ.get("SCALE", "1000"))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 512)).cuda().to(dtype)
opt = torch.optim.SGD(model.parameters(), lr=1e-6)
say(f"torch {torch.__version__}; {dtype}, loss scale {scale}")
for step in range(4):
    x = torch.randn(64, 512, device="cuda", dtype=dtype)
    loss = (model(x) * scale).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
    opt.step()
    say(f"step {step} loss {loss.item():.4g} grad norm {norm.item():.4g}")
