# A JAX start-up of the reproductions' own ("[repro]" lines are this script's wording): a fixed device budget
# (XLA_PYTHON_CLIENT_MEM_FRACTION from BUDGET_GIB and the card's size), a bf16 cache of CACHE_GIB, then a
# jitted rescale that donates the cache (donate_argnums=0) and multiplies it by a scale array of SCALE_DTYPE.
# A float32 scale promotes the result to float32: the output cannot reuse the donated buffer, so input and
# output are alive together. Whatever JAX and XLA print is their own.
import functools, os, subprocess, time

total_mib = int(subprocess.check_output(
    ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"]).split()[0])
budget = float(os.environ.get("BUDGET_GIB", "8"))
os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = f"{budget * 1024 / total_mib:.4f}"


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


say(f"device budget {budget:.1f} GiB of {total_mib / 1024:.1f} GiB "
    f"(XLA_PYTHON_CLIENT_MEM_FRACTION={os.environ['XLA_PYTHON_CLIENT_MEM_FRACTION']})")
import jax, jax.numpy as jnp  # noqa: E402

say(f"jax {jax.__version__} devices {jax.devices()}")
cache_gib = float(os.environ.get("CACHE_GIB", "3"))
cache = jnp.zeros((int(cache_gib * (1 << 30)) // 2,), dtype=jnp.bfloat16)
cache.block_until_ready()
say(f"cache allocated: {cache.shape[0]} bf16 ({cache_gib:.2f} GiB)")
scale = jnp.asarray(0.5, dtype=os.environ.get("SCALE_DTYPE", "float32"))


@functools.partial(jax.jit, donate_argnums=(0,))
def rescale(c, s):
    return c * s


say(f"rescaling the cache in place (scale dtype {scale.dtype})")
cache = rescale(cache, scale)
cache.block_until_ready()
say(f"cache rescaled: dtype {cache.dtype}, {cache.nbytes / (1 << 30):.2f} GiB")
x = jnp.ones((64, 4096), dtype=jnp.bfloat16)
w = jnp.ones((4096, 4096), dtype=jnp.bfloat16)
for i in range(3):
    jnp.argmax((x + i) @ w, axis=-1).block_until_ready()
say("ready: 3 steps served")
