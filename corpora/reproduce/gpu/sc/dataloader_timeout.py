# A training loop on the GPU fed by a DataLoader with worker processes and a timeout (TIMEOUT s): from
# sample START on, each read takes SLOW s (a stalled network file system). Lines with "[repro]" are
# this script's own.  Knobs: SLOW=seconds  START=N  TIMEOUT=seconds
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

E = os.environ.get
SLOW, START, TIMEOUT = float(E("SLOW", "0")), int(E("START", "96")), int(E("TIMEOUT", "10"))


class Shards(torch.utils.data.Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        if i >= START:
            time.sleep(SLOW)
        g = torch.Generator().manual_seed(i)
        return torch.randn(128, generator=g), torch.randint(0, 10, (), generator=g)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dl = torch.utils.data.DataLoader(Shards(), batch_size=16, num_workers=2, timeout=TIMEOUT)
    say(f"torch {torch.__version__}; 16 steps of 16 samples, 2 loader workers, timeout {TIMEOUT} s")
    for step, (x, y) in enumerate(dl):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 3:
            say(f"step {step + 1} loss {loss.item():.4f}")
    say("epoch done")
