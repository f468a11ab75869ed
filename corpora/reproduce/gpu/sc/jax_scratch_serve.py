# A JAX start-up of the reproductions' own ("toyserve-jax" lines are this script's wording): a fixed
# device budget (XLA_PYTHON_CLIENT_MEM_FRACTION computed from BUDGET_GIB and the card's size), weights
# of WEIGHT_GIB, a jitted matmul over them (XLA's autotuner wants scratch copies of the operands), then a
# KV-style pool of KV_GIB and a few steps. Run 1 scaled the weights in a second program (INIT=scaled). Whatever XLA's BFC allocator prints is its own.
import os, subprocess, sys, time

total_mib = int(subprocess.check_output(
    ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"]).split()[0])
budget = float(os.environ.get("BUDGET_GIB", "8"))
os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = f"{budget * 1024 / total_mib:.4f}"


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " toyserve-jax " + msg, flush=True)


say(f"device budget {budget:.1f} GiB of {total_mib / 1024:.1f} GiB "
    f"(XLA_PYTHON_CLIENT_MEM_FRACTION={os.environ['XLA_PYTHON_CLIENT_MEM_FRACTION']})")
import jax, jax.numpy as jnp  # noqa: E402

say(f"jax {jax.__version__} devices {jax.devices()}")
K = 8192
w_gib = float(os.environ.get("WEIGHT_GIB", "4.4"))
N = int(w_gib * (1 << 30) / (K * 2)) // 128 * 128
# INIT=scaled: ones * 0.01 (one fused XLA program whose input and output are both weight-sized); else plain ones
W = jnp.ones((K, N), dtype=jnp.bfloat16)
if os.environ.get("INIT", "scaled") == "scaled":
    W = W * 0.01
W.block_until_ready()
say(f"weights loaded: {K}x{N} bf16 ({K * N * 2 / (1 << 30):.2f} GiB)")


@jax.jit
def step(x, w):
    return jnp.argmax(x @ w, axis=-1)


x = jnp.ones((64, K), dtype=jnp.bfloat16)
say("compiling the forward (batch 64)")
step(x, W).block_until_ready()
say("forward compiled and run")
kv_gib = float(os.environ.get("KV_GIB", "1"))
say(f"allocating KV pool: {kv_gib:.2f} GiB")
kv = jnp.zeros((int(kv_gib * (1 << 30)) // 2,), dtype=jnp.bfloat16)
kv.block_until_ready()
say("KV pool ready")
for i in range(3):
    step(x + i, W).block_until_ready()
say("ready: 3 steps served")
