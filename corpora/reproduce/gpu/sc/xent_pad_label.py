# A classification fine-tuning step on the GPU whose padded label positions carry PAD_LABEL: -100 is
# cross_entropy's default ignore_index, any other negative value is an index out of range.
# Lines with "[repro]" are this script's own.  Knobs: PAD_LABEL=-100|-1
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import torch  # noqa: E402

pad = int(os.environ.get("PAD_LABEL", "-100"))
torch.manual_seed(0)
vocab, seq, batch = 1000, 64, 8
model = torch.nn.Sequential(torch.nn.Embedding(vocab, 256), torch.nn.Linear(256, vocab)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, vocab, (batch, seq), device="cuda")
labels = ids.clone()
labels[:, 48:] = pad  # the collator's padding
say(f"torch {torch.__version__}; batch {batch}x{seq}, labels padded with {pad}")
for step in range(3):
    logits = model(ids)
    loss = torch.nn.functional.cross_entropy(logits.view(-1, vocab), labels.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    say(f"step {step} loss {loss.item():.4f}")
