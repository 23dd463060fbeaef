// pullqueueprobe (issue 25, 2026-11-26, sixth session): p2pbench's copy-engine pulls of 1 MiB between the GPUs,
// queued as issued in windows of 8 and 2 copies (the slope of the two), read 70-110 GB/s round by round, a
// run's five rounds sometimes all at 72-76 (2× H200, testdata/reference/h200x2/2026-11-25-ab). Is it the GPU,
// or the host issuing the copies slower than the copy engine moves them? Every 100 ms for 8 s, pulls by device
// dst from device src on dst's stream: (A) as p2pbench: event, 8 copies, event, then event, 2 copies, event; the
// host's time to issue the 8; (B) the same 8 after 8 untimed copies queued first; (C) 64 copies. Prints each, in
// GB/s.
// nvcc -O2 -arch=sm_90 -o pullqueueprobe pullqueueprobe.cu
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char **argv) {
  int src = argc > 1 ? atoi(argv[1]) : 0, dst = 1 - src;
  size_t bytes = argc > 2 ? strtoull(argv[2], 0, 0) : (1 << 20);
  void *s, *d;
  CK(cudaSetDevice(src)); CK(cudaDeviceEnablePeerAccess(dst, 0)); CK(cudaMalloc(&s, bytes)); CK(cudaMemset(s, 1, bytes));
  CK(cudaSetDevice(dst)); CK(cudaDeviceEnablePeerAccess(src, 0)); CK(cudaMalloc(&d, bytes));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t ev[4]; for (auto &x : ev) CK(cudaEventCreate(&x));
  for (int w = 0; w < 8; w++) CK(cudaMemcpyPeerAsync(d, dst, s, src, bytes, st));
  CK(cudaStreamSynchronize(st));
  auto win = [&](int k, int lead, double *issue) -> double {
    for (int i = 0; i < lead; i++) CK(cudaMemcpyPeerAsync(d, dst, s, src, bytes, st));
    CK(cudaEventRecord(ev[0], st));
    double t0 = now_us();
    for (int i = 0; i < k; i++) CK(cudaMemcpyPeerAsync(d, dst, s, src, bytes, st));
    if (issue) *issue = (now_us() - t0) / k;
    CK(cudaEventRecord(ev[1], st)); CK(cudaEventSynchronize(ev[1]));
    float ms; CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    return ms * 1000.0;  // µs
  };
  printf("pulls %d<-%d %zu B: t(s) | A: 8 copies GB/s, 2 copies, slope, issue us/copy | B: 8 after 8 queued | C: 64\n", dst, src, bytes);
  double start = now_us();
  while (now_us() - start < 8e6) {
    double issue;
    double a8 = win(8, 0, &issue), a2 = win(2, 0, nullptr), b8 = win(8, 8, nullptr), c64 = win(64, 0, nullptr);
    auto gbs = [&](double us, int k) { return bytes * k / us / 1e3; };
    printf("%6.2f | %6.1f %6.1f %6.1f %5.2f | %6.1f | %6.1f\n", (now_us() - start) / 1e6, gbs(a8, 8), gbs(a2, 2), bytes * 6 / (a8 - a2) / 1e3, issue, gbs(b8, 8), gbs(c64, 64));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}
