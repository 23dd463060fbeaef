// pinprobe: how long pinning 512 MiB of host memory takes: cuMemHostAlloc, and mmap + THP + cuMemHostRegister.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <sys/mman.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%d %s: %s\n", __LINE__, #x, s); exit(1);} } while (0)
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
  const size_t n = 512ull << 20;
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, dev)); CK(cuCtxSetCurrent(c));
  for (int i = 0; i < 2; i++) {
    void *p; double t = now(); CK(cuMemHostAlloc(&p, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)); double a = now() - t;
    t = now(); CK(cuMemFreeHost(p)); printf("cuMemHostAlloc 512 MiB: %.1f ms (free %.1f ms)\n", a * 1e3, (now() - t) * 1e3);
  }
  for (int huge = 0; huge < 2; huge++) for (int i = 0; i < 2; i++) {
    double t = now();
    void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (huge) madvise(p, n, MADV_HUGEPAGE);
    double m = now() - t; t = now();
    memset(p, 0, n); double z = now() - t; t = now();
    CK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP)); double r = now() - t;
    t = now(); CK(cuMemHostUnregister(p)); double u = now() - t; munmap(p, n);
    printf("mmap%s 512 MiB: mmap %.1f ms, touch %.1f ms, cuMemHostRegister %.1f ms (unregister %.1f)\n", huge ? "+MADV_HUGEPAGE" : "", m * 1e3, z * 1e3, r * 1e3, u * 1e3);
  }
  // without touching first
  for (int huge = 0; huge < 2; huge++) {
    double t = now();
    void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (huge) madvise(p, n, MADV_HUGEPAGE);
    CK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    printf("mmap%s untouched + cuMemHostRegister: %.1f ms\n", huge ? "+MADV_HUGEPAGE" : "", (now() - t) * 1e3);
    CK(cuMemHostUnregister(p)); munmap(p, n);
  }
  return 0;
}
