# JAX without jax_enable_x64 (its default): a paged cache's byte offset NUM_PAGES * PAGE_BYTES is made an
# int64 device scalar; JAX truncates int64 to int32. "[repro]" lines are this script's wording.
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import jax, jax.numpy as jnp  # noqa: E402

say(f"jax {jax.__version__} devices {jax.devices()} x64={jax.config.jax_enable_x64}")
pages, page_bytes = int(os.environ.get("NUM_PAGES", "512")), int(os.environ.get("PAGE_BYTES", "2097152"))
say(f"page table: {pages} pages of {page_bytes} bytes")
base = jnp.asarray(pages * page_bytes, dtype=jnp.int64)
ids = jnp.arange(8, dtype=jnp.int64)
offsets = jax.jit(lambda b, i: b - (i + 1) * page_bytes)(base, ids)
say(f"last page offsets: {offsets.tolist()}")
