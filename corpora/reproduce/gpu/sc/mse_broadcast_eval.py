# A regression head trained for a few steps on mini-batches, then evaluated on one batch of EVAL_BATCH rows.
# The head returns [B, 1] and the targets are [B]: torch.nn.functional.mse_loss broadcasts the pair to
# [B, B]. "[repro]" lines are this script's own.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.manual_seed(0)
D = 256
head = torch.nn.Sequential(torch.nn.Linear(D, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1)).cuda()
opt = torch.optim.AdamW(head.parameters(), lr=1e-3)
say(f"torch {torch.__version__}; training 20 steps of batch 512")
for i in range(20):
    x, t = torch.randn(512, D, device="cuda"), torch.randn(512, device="cuda")
    loss = F.mse_loss(head(x), t)
    opt.zero_grad()
    loss.backward()
    opt.step()
say(f"train loss {loss.item():.4f}")
B = int(os.environ.get("EVAL_BATCH", "4096"))
with torch.no_grad():
    x, t = torch.randn(B, D, device="cuda"), torch.randn(B, device="cuda")
    say(f"eval on {B} rows")
    say(f"eval loss {F.mse_loss(head(x), t).item():.4f}")
