// busyprobe (issue 23, 2026-11-25, fifth session): do 4-byte copy-engine pulls queued back to back cost less
// while the GPUs run kernels? p2pbench's back-to-back pulls (after its warm-up, between kernels of its other
// tests) read 6.1-8.7 µs a copy where pullprobe.cu on idle GPUs read 8.4-8.8 µs on the same 2× H200
// (testdata/reference/h200x2/2026-11-25-t).
// Windows of 64 pulls by device 1 from device 0 (as pullprobe: three untimed, then windows between events on
// a non-blocking stream), with: both GPUs idle; a kernel spinning on one SM of the puller, of the source, of
// both (on other streams, for the whole window); right after 200 ms of spinning on both, then idle.
// nvcc -O2 -arch=sm_90 -o busyprobe busyprobe.cu
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); return 1;}}while(0)
__device__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(volatile int *stop, unsigned long long ns) {
  unsigned long long t0 = gtime();
  while (!*stop && gtime() - t0 < ns) {}
}
int main() {
  void *s, *d; int *stop; cudaStream_t st, busy[2];
  CK(cudaSetDevice(0)); CK(cudaDeviceEnablePeerAccess(1, 0)); CK(cudaMalloc(&s, 4096)); CK(cudaStreamCreateWithFlags(&busy[0], cudaStreamNonBlocking));
  CK(cudaSetDevice(1)); CK(cudaDeviceEnablePeerAccess(0, 0)); CK(cudaMalloc(&d, 4096)); CK(cudaStreamCreateWithFlags(&busy[1], cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaHostAlloc(&stop, 4, cudaHostAllocMapped | cudaHostAllocPortable));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int w = 0; w < 3; w++) CK(cudaMemcpyPeerAsync(d, 1, s, 0, 4, st));
  CK(cudaStreamSynchronize(st));
  auto windows = [&](const char *label, bool on0, bool on1) -> int {
    *(volatile int *)stop = 0;
    if (on0) { CK(cudaSetDevice(0)); spin<<<1, 32, 0, busy[0]>>>(stop, 2000000000ull); }
    if (on1) { CK(cudaSetDevice(1)); spin<<<1, 32, 0, busy[1]>>>(stop, 2000000000ull); }
    CK(cudaSetDevice(1));
    printf("%-44s", label);
    for (int r = 0; r < 5; r++) {
      CK(cudaEventRecord(a, st));
      for (int i = 0; i < 64; i++) CK(cudaMemcpyPeerAsync(d, 1, s, 0, 4, st));
      CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); printf(" %.2f", ms * 1000 / 64);
    }
    printf(" us\n");
    *(volatile int *)stop = 1;
    for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); CK(cudaDeviceSynchronize()); }
    return 0;
  };
  for (int pass = 0; pass < 2; pass++) {
    windows("idle", false, false);
    windows("kernel spinning on the puller (1)", false, true);
    windows("kernel spinning on the source (0)", true, false);
    windows("kernels spinning on both", true, true);
    *(volatile int *)stop = 0;
    for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); spin<<<1, 32, 0, busy[g]>>>(stop, 200000000ull); }
    for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); CK(cudaDeviceSynchronize()); }
    windows("right after 200 ms of spinning on both", false, false);
  }
  return 0;
}
