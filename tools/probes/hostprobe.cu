// hostprobe: copies between pinned host memory and a GPU (cudaMemcpyAsync, 512 MiB, host to device and
// device to host) timed by events over windows of N copies back to back, N = 1, 4, 16 and 64, seven
// windows each, on an idle stream: the plain long measurement that host-copy figures are held to.
// Prints GB/s per window (N × bytes / time), the median per N, and the rate of the three extra copies
// of a window of 4 over one of 1 (3 × bytes / (T4 − T1)).
// Build: nvcc -O2 -o hostprobe hostprobe.cu; run: hostprobe [device]
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
static size_t bytes = 512ull << 20;
static cudaStream_t st;
static cudaEvent_t a, b;
static double window(void *dst, const void *src, int n) {
  CK(cudaEventRecord(a, st));
  for (int i = 0; i < n; i++) CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, st));
  CK(cudaEventRecord(b, st));
  CK(cudaStreamSynchronize(st));
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size()/2]; }
int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 0;
  CK(cudaSetDevice(dev));
  void *h, *d;
  CK(cudaHostAlloc(&h, bytes, cudaHostAllocPortable)); CK(cudaMalloc(&d, bytes));
  CK(cudaMemset(d, 1, bytes)); for (size_t i = 0; i < bytes; i += 4096) ((char *)h)[i] = 1;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  const char *names[] = {"h2d", "d2h"};
  for (int dir = 0; dir < 2; dir++) {
    void *dst = dir == 0 ? d : h; const void *src = dir == 0 ? h : d;
    for (int w = 0; w < 4; w++) window(dst, src, 4);
    int ns[] = {1, 4, 16, 64};
    double t1 = 0, t4 = 0;
    for (int n : ns) {
      std::vector<double> gbs, ms;
      for (int w = 0; w < 7; w++) { double t = window(dst, src, n); ms.push_back(t); gbs.push_back(n * bytes / (t * 1e6)); }
      printf("%s N=%-3d median %.2f GB/s  windows", names[dir], n, median(gbs));
      for (double g : gbs) printf(" %.2f", g);
      printf("\n");
      if (n == 1) t1 = median(ms);
      if (n == 4) t4 = median(ms);
    }
    printf("%s extra copies of 4 over 1: %.2f GB/s\n", names[dir], 3 * bytes / ((t4 - t1) * 1e6));
  }
  return 0;
}
