# env.abi-mismatch: extension built against an older build of its C++ dependency (symbol changed).
import ctypes, sys
print(f"import of compiled ops: dlopen {sys.argv[1]}", flush=True)
lib = ctypes.CDLL(sys.argv[1])
print("loaded", lib)
