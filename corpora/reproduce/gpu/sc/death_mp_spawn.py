# Two GPU workers started by torch.multiprocessing.spawn (as a data-parallel server starts its
# engine processes); the parent reports a worker's death. MODE=devassert: worker 0's embedding lookup
# gets a token id past the vocabulary (device-side assert); MODE=illegal: worker 0 runs a Triton
# store with overflowed indices (illegal address); MODE=good: both workers serve and exit cleanly.
import os, sys, time, logging
import torch, torch.multiprocessing as mp
MODE = os.environ.get("MODE", "devassert")


def worker(rank, mode):
    logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s DP{rank} TP0] %(message)s", datefmt="%Y-%m-%d %H:%M:%S", force=True)
    log = logging.getLogger("sglang.srt.managers.scheduler")
    torch.cuda.set_device(0)
    log.info("Load weight begin. avail mem=%.2f GB" % (torch.cuda.mem_get_info()[0] / 2**30))
    emb = torch.nn.Embedding(32000, 1024, device="cuda", dtype=torch.bfloat16)
    log.info("Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB" % (torch.cuda.mem_get_info()[0] / 2**30))
    ids = torch.randint(0, 32000, (8, 128), device="cuda")
    for step in range(3):
        if rank == 0 and step == 2 and mode == "devassert":
            ids[3, 17] = 32011                      # an added special token the embedding does not have
        if rank == 0 and step == 2 and mode == "illegal":
            import triton, triton.language as tl

            @triton.jit
            def scatter(out, idx, n, B: tl.constexpr):
                o = tl.program_id(0) * B + tl.arange(0, B)
                m = o < n
                tl.store(out + tl.load(idx + o, mask=m), 1.0, mask=m)
            n = 1 << 14
            out = torch.zeros(n, device="cuda")
            scatter[(n // 1024,)](out, torch.arange(n, device="cuda") * (1 << 18), n, B=1024)
        h = emb(ids).float().sum()
        log.info(f"Prefill batch. #new-seq: 8, #new-token: 1024, #cached-token: 0, token usage: 0.00, #running-req: {step}, #queue-req: 0, sum={h.item():.1f}")
        time.sleep(0.5)
    log.info("worker finished its batches")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
    logging.info(f"Launching 2 data-parallel workers (mode={MODE}) with torch.multiprocessing.spawn")
    mp.spawn(worker, args=(MODE,), nprocs=2, join=True)
    logging.info("all workers exited cleanly")
