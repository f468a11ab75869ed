"""env.driver-too-old: CUDA requested where no NVIDIA driver is usable.
torch here is the CPU build; libcudart.so.13 (CUDA 13.0 runtime) is installed
but there is no libcuda.so (driver)."""
import ctypes

import common


def torch_to_cuda():
    import torch
    x = torch.zeros(4, 4)
    x.to("cuda")


def torch_set_device():
    import torch
    torch.cuda.set_device(0)
    torch.cuda.current_device()


def torch_mem_get_info():
    import torch
    torch.cuda.mem_get_info(0)


def torch_init():
    import torch
    torch.cuda.init()


def _cudart():
    return ctypes.CDLL("libcudart.so.13")


def _check(rt, err, what):
    if err != 0:
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        rt.cudaGetErrorName.restype = ctypes.c_char_p
        raise RuntimeError(f"{what} failed: {rt.cudaGetErrorName(err).decode()}: "
                           f"{rt.cudaGetErrorString(err).decode()}")


def cudart_device_count():
    rt = _cudart()
    n = ctypes.c_int(0)
    _check(rt, rt.cudaGetDeviceCount(ctypes.byref(n)), "cudaGetDeviceCount")


def cudart_malloc():
    rt = _cudart()
    p = ctypes.c_void_p()
    _check(rt, rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)), "cudaMalloc")


def cudart_set_device():
    rt = _cudart()
    _check(rt, rt.cudaSetDevice(0), "CUDA error: cudaSetDevice(0)")


VARIANTS = {
    "torch_to_cuda": torch_to_cuda,
    "torch_set_device": torch_set_device,
    "torch_mem_get_info": torch_mem_get_info,
    "torch_init": torch_init,
    "cudart_device_count": cudart_device_count,
    "cudart_malloc": cudart_malloc,
    "cudart_set_device": cudart_set_device,
}

if __name__ == "__main__":
    common.main(VARIANTS)
