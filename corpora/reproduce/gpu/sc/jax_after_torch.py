# torch and JAX in one process (a torch model plus a JAX sampler, say): torch loads its part first and
# holds HOLD_FRAC of the GPU, then JAX starts with its default preallocation (75% of the card). The
# "toyserve-mixed" lines are this script's own; everything else is torch's / XLA's.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " toyserve-mixed " + msg, flush=True)


import torch  # noqa: E402

free, total = torch.cuda.mem_get_info()
hold = torch.empty(int(total * float(os.environ.get("HOLD_FRAC", "0.5"))), dtype=torch.uint8, device="cuda")
free2, _ = torch.cuda.mem_get_info()
say(f"torch part loaded: holds {hold.numel() / 2**30:.2f} GiB, free {free2 / 2**30:.2f} of {total / 2**30:.2f} GiB")
import jax, jax.numpy as jnp  # noqa: E402

say(f"jax {jax.__version__} devices {jax.devices()}")
x = jnp.ones((4096, 4096), dtype=jnp.bfloat16)
say(f"jax sampler warm-up: {float((x @ x).sum()):.1f}")
kv_gib = float(os.environ["JAX_KV_FRAC"]) * total / 2**30 if "JAX_KV_FRAC" in os.environ else float(os.environ.get("JAX_KV_GIB", "16"))
say(f"allocating jax KV pool: {kv_gib:.2f} GiB")
kv = jnp.zeros((int(kv_gib * 2**30) // 2,), dtype=jnp.bfloat16)
kv.block_until_ready()
say(f"jax KV pool {kv.nbytes / 2**30:.2f} GiB ready")
say("ready")
