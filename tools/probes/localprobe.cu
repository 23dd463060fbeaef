// localprobe: a GPU's copy of its own memory (cudaMemcpyAsync device to device, 512 MiB) timed by
// events over windows of N copies back to back, N = 1, 4, 16, 79 and 400, seven windows each,
// queued on an idle stream (plain) and queued behind a kernel that spins on a host flag until all
// are queued (held, as nvbandwidth holds its stream). Prints GB/s per window (N × bytes / time)
// and, per pair of windows of 1 and 4, the rate of the three extra copies (3 × bytes / (T4 − T1)),
// which is how p2pbench's local_copy turns its samples into a figure.
// Build: nvcc -O2 -o localprobe localprobe.cu
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
__global__ void spin(volatile int *flag){ while(*flag==0){} }
static size_t bytes = 512ull << 20;
static void *s, *d;
static int *hflag, *dflag;
static cudaStream_t st;
static cudaEvent_t a, b;
static double window(int n, bool held) {
  if (held) { *(volatile int *)hflag = 0; spin<<<1,1,0,st>>>(dflag); CK(cudaGetLastError()); }
  CK(cudaEventRecord(a, st));
  for (int i = 0; i < n; i++) CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, st));
  CK(cudaEventRecord(b, st));
  if (held) *(volatile int *)hflag = 1;
  CK(cudaStreamSynchronize(st));
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size()/2]; }
int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 0;
  CK(cudaSetDevice(dev));
  CK(cudaMalloc(&s, bytes)); CK(cudaMalloc(&d, bytes)); CK(cudaMemset(s, 1, bytes)); CK(cudaMemset(d, 0, bytes));
  CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dflag, hflag, 0));
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int w = 0; w < 8; w++) window(4, false);
  int ns[] = {1, 4, 16, 79, 400};
  for (int h = 0; h < 2; h++) {
    for (int n : ns) {
      std::vector<double> r;
      printf("%-5s N=%3d GB/s:", h ? "held" : "plain", n);
      for (int k = 0; k < 7; k++) { double ms = window(n, h); r.push_back(n * bytes / (ms * 1e6)); printf(" %.1f", r.back()); }
      printf("  median %.1f\n", median(r));
    }
    std::vector<double> f;
    printf("%-5s fit 3 x bytes / (T4 - T1) GB/s:", h ? "held" : "plain");
    for (int k = 0; k < 7; k++) { double t1 = window(1, h), t4 = window(4, h); f.push_back(3 * bytes / ((t4 - t1) * 1e6)); printf(" %.1f", f.back()); }
    printf("  median %.1f\n", median(f));
  }
  return 0;
}
