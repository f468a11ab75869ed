# JAX-backed server start-up (SGLang-JAX style lines). Used by several scenarios:
#  module-missing (CUDA plugin not installed -> "Falling back to cpu", later no 'cuda' backend),
#  library-missing (a CUDA library missing -> plugin fails, fallback, later no 'cuda' backend),
#  driver-too-old (no GPU visible), compiler-missing (no libdevice), out-of-memory (mem fraction).
import os, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = sys.argv[1] if len(sys.argv) > 1 else "bad"
SIZE_GB = float(os.environ.get("KV_GB", "4"))
from srv import SGLang, gib
s = SGLang(model_path="Qwen/Qwen3-8B", tokenizer_path="Qwen/Qwen3-8B", device="gpu",
           mem_fraction_static=float(os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.75")),
           attention_backend="fa", precompile_bs_paddings=[1, 8, 64])
s.start()
try:
    import jax, jax.numpy as jnp
    s.log.info("Init JAX distributed begin.")
    s.log.info(f"JAX devices: {jax.devices()}")
    time.sleep(1)
    s.log.info("Load weight begin.")
    key = jax.random.PRNGKey(0)
    w = jax.random.normal(key, (4096, 4096), dtype=jnp.bfloat16)
    time.sleep(1)
    s.log.info(f"Load weight end. type=Qwen3ForCausalLM, dtype=bfloat16")
    gpu = jax.devices("cuda")[0]
    w = jax.device_put(w, gpu)
    @jax.jit
    def layer(x, w):
        h = x @ w
        return jax.nn.gelu(h) * jnp.exp(-jnp.tanh(h))
    x = jnp.ones((64, 4096), dtype=jnp.bfloat16)
    s.log.info("Precompile decode graphs begin. bs_paddings=[1, 8, 64]")
    y = layer(x, w).block_until_ready()
    s.log.info("Precompile decode graphs end.")
    n = int(SIZE_GB * (1 << 30) / 2 / 2 / 4096)
    @jax.jit
    def make_kv():
        return jnp.zeros((2, n, 4096), dtype=jnp.bfloat16) + 1
    kv = make_kv().block_until_ready()
    s.log.info(f"KV Cache is allocated. #tokens: {n}, K size: {SIZE_GB/2:.2f} GB, V size: {SIZE_GB/2:.2f} GB")
    s.ready(tokens=n)
except Exception:
    s.fail()
