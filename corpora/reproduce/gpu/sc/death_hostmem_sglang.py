# A server-shaped start-up that reads its weights into host memory, shard by shard (256 MiB pieces),
# as a CPU-offload / pinned-staging loader does. Run under a cgroup memory limit (memory.max) or an
# address-space limit (ulimit -v) by the driver: the kernel's OOM killer SIGKILLs it (no Python
# output at all), or Python gets MemoryError. SHARDS*SHARD_GIB is the host memory asked for.
import os, sys, time, signal
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gpu-early-warning"))
from srv import SGLang
shards = int(os.environ.get("SHARDS", "8")); per = float(os.environ.get("SHARD_GIB", "2"))
s = SGLang(model_path="Qwen/Qwen2.5-32B-Instruct", cpu_offload_gb=int(shards * per))
s.start()
s.log.info("Init torch distributed begin.")
s.log.info("Init torch distributed ends. mem usage=0.00 GB")
s.log.info(f"Load weight begin. cpu offload: staging {shards} shards in host memory")
held = []


def stop(signum, frame):
    s.main.info("INFO:     Shutting down")
    s.main.info("INFO:     Application shutdown complete.")
    s.main.info(f"INFO:     Finished server process [{os.getpid()}]")
    sys.stdout.flush()
    os._exit(0)


try:
  for i in range(shards):
    n = int(per * (1 << 30))
    held.append(b"\x01" * n)               # written, so really resident
    s.log.info(f"Loading safetensors checkpoint shards: {i + 1}/{shards} ({(i + 1) * per:.1f} GiB staged)")
    time.sleep(0.2)
  s.log.info("Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16")
except Exception:
    s.fail()
signal.signal(signal.SIGTERM, stop)
s.ready()
i = 0
while os.environ.get("SERVE") == "1":      # stays up until stopped
    time.sleep(3)
    i += 1
    s.log.info(f"Decode batch. #running-req: 1, #token: {40 + 8 * i}, token usage: 0.00, gen throughput (token/s): 38.{i % 10}, #queue-req: 0, ")
