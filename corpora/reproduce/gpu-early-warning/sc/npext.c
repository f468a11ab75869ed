/* env.abi-mismatch: a C extension whose module init does what NumPy's import_array() does.
 * Built with -DNUMPY1 it looks the C-API up where NumPy 1.x headers look (numpy.core._multiarray_umath),
 * as an extension compiled against NumPy 1.x does; without it, where NumPy 2.x headers look
 * (numpy._core._multiarray_umath). The messages are NumPy's own. */
#include <Python.h>
#ifdef NUMPY1
#define NP_MOD "numpy.core._multiarray_umath"
#else
#define NP_MOD "numpy._core._multiarray_umath"
#endif
static PyObject* version(PyObject* self, PyObject* args) { return PyUnicode_FromString("1.2.0"); }
static PyMethodDef methods[] = {{"version", version, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "xgrammar_bitmask", NULL, -1, methods};
PyMODINIT_FUNC PyInit_xgrammar_bitmask(void) {
  PyObject* numpy = PyImport_ImportModule(NP_MOD);
  if (numpy == NULL) { PyErr_Print(); PyErr_SetString(PyExc_ImportError, "numpy.core.multiarray failed to import"); return NULL; }
  PyObject* c_api = PyObject_GetAttrString(numpy, "_ARRAY_API");
  Py_DECREF(numpy);
  if (c_api == NULL) { PyErr_Print(); PyErr_SetString(PyExc_ImportError, "numpy.core.multiarray failed to import"); return NULL; }
  Py_DECREF(c_api);
  return PyModule_Create(&mod);
}
