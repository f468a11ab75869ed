# gpu.illegal-access: token id >= vocab size -> device-side assert in the embedding lookup, SGLang wrapper.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import sglang_logger, sglang_report_and_exit
logger = sglang_logger(0)
import torch
import torch.nn.functional as F

vocab, hidden = 151936, 64
emb = torch.randn(vocab, hidden, dtype=torch.bfloat16, device="cuda")
lm_head = torch.randn(hidden, 1024, dtype=torch.bfloat16, device="cuda")
logger.info("The server is fired up and ready to roll!")

def forward(input_ids):
    h = F.embedding(input_ids, emb)
    logits = h @ lm_head
    return torch.argmax(logits, dim=-1)

try:
    logger.info("Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0")
    ids = torch.tensor([151644, 872, 198, 152001, 374, 279, 6722], device="cuda")
    next_ids = forward(ids)
    logger.info(f"next tokens {next_ids.tolist()}")
except Exception:
    sglang_report_and_exit(logger)
