# gpu.out-of-memory: JAX/XLA allocation larger than the device.
import jax, jax.numpy as jnp
print("jax", jax.__version__, jax.devices())
x = jnp.ones((48 << 30,), dtype=jnp.float32)
print(x.sum())
