"""env.library-missing: native shared libraries that cannot be opened."""
import ctypes
import os
import subprocess
import sys

import common


def cdll_nvrtc():
    # what a JIT (e.g. cuda-python / flashinfer) does to get NVRTC
    ctypes.CDLL("libnvrtc.so.13")


def cdll_cudart12():
    # only libcudart.so.13 is installed on this machine
    ctypes.CDLL("libcudart.so.12", mode=ctypes.RTLD_GLOBAL)


def cdll_cublaslt():
    for name in ("libcublasLt.so.13",):
        ctypes.CDLL(name)


def torch_load_library():
    import torch
    torch.ops.load_library("/opt/sglang/lib/libcustom_all_reduce.so")


def _linked_ext(libname, modname, soname=None):
    """Build a Python C extension linked (-l) against lib<libname>.so, then
    delete the library, then import the extension."""
    d = common.workdir(f"ext-{modname}")
    libdir = os.path.join(d, "lib")
    os.makedirs(libdir, exist_ok=True)
    with open(os.path.join(d, "dep.c"), "w") as f:
        f.write("int dep_version(void){return 12;}\n")
    lib = os.path.join(libdir, f"lib{libname}.so")
    cmd = ["gcc", "-shared", "-fPIC", "-o", lib, os.path.join(d, "dep.c")]
    if soname:
        cmd += [f"-Wl,-soname,{soname}"]
    subprocess.check_call(cmd)
    with open(os.path.join(d, "ext.c"), "w") as f:
        f.write(f"""#include <Python.h>
int dep_version(void);
static PyObject* ver(PyObject* s, PyObject* a){{ return PyLong_FromLong(dep_version()); }}
static PyMethodDef M[] = {{{{"version", ver, METH_NOARGS, ""}}, {{0}}}};
static struct PyModuleDef D = {{PyModuleDef_HEAD_INIT, "{modname}", 0, -1, M}};
PyMODINIT_FUNC PyInit_{modname}(void){{ return PyModule_Create(&D); }}
""")
    import sysconfig
    inc = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    subprocess.check_call(["gcc", "-shared", "-fPIC", f"-I{inc}", "-o",
                           os.path.join(d, modname + suffix), os.path.join(d, "ext.c"),
                           f"-L{libdir}", f"-l{libname}"])
    os.remove(lib)  # the runtime library is gone (e.g. package uninstalled)
    for f in os.listdir(libdir):
        os.remove(os.path.join(libdir, f))
    sys.path.insert(0, d)
    return modname


def ext_flashinfer_rt():
    m = _linked_ext("flashinfer_rt", "flashinfer_kernels", soname="libflashinfer_rt.so")
    __import__(m)


def ext_mooncake():
    m = _linked_ext("transfer_engine", "mooncake_engine", soname="libtransfer_engine.so.1")
    __import__(m)


def ext_nccl():
    m = _linked_ext("nccl", "custom_ar_ops", soname="libnccl.so.2")
    __import__(m)


VARIANTS = {
    "cdll_nvrtc": cdll_nvrtc,
    "cdll_cudart12": cdll_cudart12,
    "cdll_cublaslt": cdll_cublaslt,
    "torch_load_library": torch_load_library,
    "ext_flashinfer_rt": ext_flashinfer_rt,
    "ext_mooncake": ext_mooncake,
    "ext_nccl": ext_nccl,
}

if __name__ == "__main__":
    common.main(VARIANTS)
