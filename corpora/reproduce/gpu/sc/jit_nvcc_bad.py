# toolchain.compile-failed: a FlashInfer-style JIT step that runs ninja -> nvcc on a broken source.
import os, subprocess, sys, logging
logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(name)s - %(message)s")
log = logging.getLogger("flashinfer.jit")
src = os.path.abspath(sys.argv[1]); build = "/tmp/jit_build/fused_add_rmsnorm"
os.makedirs(build, exist_ok=True)
nvcc = os.environ.get("NVCC", "nvcc")
with open(os.path.join(build, "build.ninja"), "w") as f:
    f.write(f"""ninja_required_version = 1.3
nvcc = {nvcc}
cuda_cflags = -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a
rule cuda_compile
  command = $nvcc --generate-dependencies-with-compile --dependency-output $out.d $cuda_cflags -c $in -o $out
  depfile = $out.d
  deps = gcc
build fused_add_rmsnorm.cuda.o: cuda_compile {src}
""")
log.info("Loading JIT ops: fused_add_rmsnorm")
r = subprocess.run(["ninja", "-v", "-C", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(r.stdout, end="")
if r.returncode != 0:
    raise RuntimeError(f"Ninja build failed. Ninja output:\n{r.stdout}")
