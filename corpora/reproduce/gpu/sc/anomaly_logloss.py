# A training step with torch.autograd.detect_anomaly on: a log-likelihood term of a ReLU output that can be
# exactly zero (masked by torch.where, so the forward value is finite), or of the clamped output.
# Lines with "[repro]" are this script's own.  Knobs: CLAMP=0|1
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

clamp = os.environ.get("CLAMP", "0") == "1"
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU()).cuda()
opt = torch.optim.SGD(net.parameters(), lr=1e-2)
x = torch.randn(128, 32, device="cuda")
say(f"torch {torch.__version__}; anomaly detection on; clamp={clamp}")
with torch.autograd.detect_anomaly():
    for step in range(3):
        h = net(x)
        if clamp:
            h = h.clamp_min(1e-6)
        loss = -torch.where(h > 0, torch.log(h), torch.zeros_like(h)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        say(f"step {step} loss {loss.item():.4f}")
