# A one-process JAX job that starts its distributed runtime (jax.distributed.initialize with a
# coordinator address, as multi-host launchers pass it), then runs a jitted step on the GPU.
# Lines with "[repro]" are this script's own.  Knobs: COORD=host:port
import os, time


def say(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " [repro] " + msg, flush=True)


import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

coord = os.environ.get("COORD", "127.0.0.1:18130")
say(f"jax {jax.__version__}; coordinator {coord}, 1 process")
jax.distributed.initialize(coordinator_address=coord, num_processes=1, process_id=0, initialization_timeout=30)
say(f"devices: {jax.devices()}")
x = jnp.ones((1024, 1024))
say(f"step: {float(jax.jit(lambda a: (a @ a).sum())(x))}")
jax.distributed.shutdown()
say("done")
