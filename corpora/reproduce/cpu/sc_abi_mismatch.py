"""env.abi-mismatch: extensions built against one library, run against another."""
import os
import subprocess
import sys
import sysconfig

import common

INC = sysconfig.get_paths()["include"]
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def _sh(cmd):
    subprocess.check_call(cmd, shell=True)


def _cxx_swap(tag, modname, lib, v1_src, v2_src, call_decl, call_expr):
    """Build lib<lib>.so from v1_src, build a C++ Python extension calling into
    it, then replace the library with one built from v2_src (symbol gone) and
    import the extension."""
    d = common.workdir(f"abi-{tag}")
    open(f"{d}/v1.cpp", "w").write(v1_src)
    open(f"{d}/v2.cpp", "w").write(v2_src)
    open(f"{d}/ext.cpp", "w").write(f"""#include <Python.h>
{call_decl}
static PyObject* f(PyObject*, PyObject*) {{ return PyLong_FromLong((long)({call_expr})); }}
static PyMethodDef M[] = {{{{"f", f, METH_NOARGS, ""}}, {{nullptr, nullptr, 0, nullptr}}}};
static struct PyModuleDef D = {{PyModuleDef_HEAD_INIT, "{modname}", nullptr, -1, M}};
PyMODINIT_FUNC PyInit_{modname}(void) {{ return PyModule_Create(&D); }}
""")
    _sh(f"g++ -shared -fPIC -o {d}/lib{lib}.so {d}/v1.cpp")
    _sh(f"g++ -shared -fPIC -I{INC} -o {d}/{modname}{SUFFIX} {d}/ext.cpp -L{d} -l{lib} -Wl,-rpath,{d}")
    _sh(f"g++ -shared -fPIC -o {d}/lib{lib}.so {d}/v2.cpp")  # upgraded library
    sys.path.insert(0, d)
    __import__(modname)


def c10_setdevice():
    _cxx_swap("c10", "flash_attn_2_cuda", "c10_cuda",
              "namespace c10 { namespace cuda { int SetDevice(int d) { return d; } } }\n",
              "namespace c10 { namespace cuda { int SetDevice(signed char d) { return d; } } }\n",
              "namespace c10 { namespace cuda { int SetDevice(int d); } }", "c10::cuda::SetDevice(0)")


def tensorimpl_size():
    _cxx_swap("tensorimpl", "sgl_kernel_common_ops", "c10",
              "namespace c10 { struct TensorImpl { long size(long d) const; }; long TensorImpl::size(long d) const { return d; } }\n",
              "namespace c10 { struct TensorImpl { long size(int d) const; }; long TensorImpl::size(int d) const { return d; } }\n",
              "namespace c10 { struct TensorImpl { long size(long d) const; }; }",
              "reinterpret_cast<const c10::TensorImpl*>(0)->size(0)")


def torch_check_fail():
    _cxx_swap("checkfail", "vllm_C", "torch_cpu_stub",
              "#include <string>\nnamespace c10 { namespace detail { void torchCheckFail(const char*, const char*, unsigned, const std::string&) {} } }\n",
              "#include <string>\nnamespace c10 { namespace detail { void torchCheckFail(const char*, const char*, unsigned, const char*) {} } }\n",
              "#include <string>\nnamespace c10 { namespace detail { void torchCheckFail(const char*, const char*, unsigned, const std::string&); } }",
              "(c10::detail::torchCheckFail(\"a\", \"b\", 1, std::string(\"c\")), 0)")


def c_symbol():
    _cxx_swap("cublaslt", "deep_gemm_cpp", "cublasLt_stub",
              'extern "C" int cublasLtMatmulAlgoGetHeuristic_v2(int a) { return a; }\n',
              'extern "C" int cublasLtMatmulAlgoGetHeuristic(int a) { return a; }\n',
              'extern "C" int cublasLtMatmulAlgoGetHeuristic_v2(int a);', "cublasLtMatmulAlgoGetHeuristic_v2(1)")


def _glibcxx(tag, modname, version):
    """Link an extension against a symbol-versioned stand-in for libstdc++.so.6
    that exports version node `version`; at run time the system's real
    libstdc++.so.6 (GCC 12, newest GLIBCXX_3.4.30) is loaded instead."""
    d = common.workdir(f"glibcxx-{tag}")
    open(f"{d}/vs.map", "w").write(f"{version} {{ global: _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_replace_cold_v2Ev; }};\n")
    # assembler-level definition of a mangled std:: symbol, so no real libstdc++ is needed
    open(f"{d}/fake.cpp", "w").write(
        'extern "C" void glibcxx_placeholder(void) {}\n'
        '__asm__(".globl _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_replace_cold_v2Ev\\n"\n'
        '        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_replace_cold_v2Ev: ret\\n");\n')
    os.makedirs(f"{d}/fakelib", exist_ok=True)
    _sh(f"g++ -shared -fPIC -o {d}/fakelib/libstdc++.so.6 {d}/fake.cpp -Wl,-soname,libstdc++.so.6 -Wl,--version-script={d}/vs.map -nostdlib")
    open(f"{d}/ext.cpp", "w").write(f"""#include <Python.h>
namespace std {{ namespace __cxx11 {{ }} }}
extern "C" void _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_replace_cold_v2Ev();
static PyObject* f(PyObject*, PyObject*) {{ _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_replace_cold_v2Ev(); Py_RETURN_NONE; }}
static PyMethodDef M[] = {{{{"f", f, METH_NOARGS, ""}}, {{nullptr, nullptr, 0, nullptr}}}};
static struct PyModuleDef D = {{PyModuleDef_HEAD_INIT, "{modname}", nullptr, -1, M}};
PyMODINIT_FUNC PyInit_{modname}(void) {{ return PyModule_Create(&D); }}
""")
    _sh(f"g++ -shared -fPIC -I{INC} -o {d}/{modname}{SUFFIX} {d}/ext.cpp -L{d}/fakelib -l:libstdc++.so.6")
    sys.path.insert(0, d)
    __import__(modname)


def glibcxx_3_4_32():
    _glibcxx("32", "sgl_kernel_ops", "GLIBCXX_3.4.32")


def glibcxx_3_4_31():
    _glibcxx("31", "xgrammar_bindings", "GLIBCXX_3.4.31")


def cxxabi_1_3_15():
    _glibcxx("cxxabi", "outlines_core_rs", "CXXABI_1.3.15")


VARIANTS = {
    "c10_setdevice": c10_setdevice,
    "tensorimpl_size": tensorimpl_size,
    "torch_check_fail": torch_check_fail,
    "c_symbol": c_symbol,
    "glibcxx_3_4_32": glibcxx_3_4_32,
    "glibcxx_3_4_31": glibcxx_3_4_31,
    "cxxabi_1_3_15": cxxabi_1_3_15,
}

if __name__ == "__main__":
    common.main(VARIANTS)
