# env.library-missing: a prebuilt kernel library whose dependency is not on the loader path.
import ctypes, sys
print(f"loading custom all-reduce kernels from {sys.argv[1]}", flush=True)
lib = ctypes.CDLL(sys.argv[1])
print("loaded", lib)
