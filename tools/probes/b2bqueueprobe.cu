// b2bqueueprobe (issue 25, 2026-11-26, sixth session): p2pbench's back-to-back 4-byte pulls read 6.2-6.5 µs a
// copy in five runs once the three windows of a round were queued together (testdata/reference/h200x2/
// 2026-11-26-ae), where the build before, which waited for each window, read 6.0-8.2 by round on the same VM and
// pullprobe's windows of 64 read 8.1-8.5.
// Does queueing the windows together choose the faster of the two speeds such pulls take? Alternating, in one
// process, pulls by device 1 from device 0 on a non-blocking stream: (a) three windows of 2 untimed + 50 timed
// copies, each waited for; (b) the same three windows queued together, then waited for. µs a copy per window.
// nvcc -O2 -arch=sm_90 -o b2bqueueprobe b2bqueueprobe.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t err_=(x); if(err_){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(err_)); exit(1);}}while(0)
int main() {
  void *s, *d;
  CK(cudaSetDevice(0)); CK(cudaDeviceEnablePeerAccess(1, 0)); CK(cudaMalloc(&s, 4096));
  CK(cudaSetDevice(1)); CK(cudaDeviceEnablePeerAccess(0, 0)); CK(cudaMalloc(&d, 4096));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t ev[6]; for (auto &x : ev) CK(cudaEventCreate(&x));
  auto window = [&](int w) {
    for (int i = 0; i < 2; i++) CK(cudaMemcpyPeerAsync(d, 1, s, 0, 4, st));
    CK(cudaEventRecord(ev[2 * w], st));
    for (int i = 0; i < 50; i++) CK(cudaMemcpyPeerAsync(d, 1, s, 0, 4, st));
    CK(cudaEventRecord(ev[2 * w + 1], st));
  };
  auto us = [&](int w) { float ms; CK(cudaEventElapsedTime(&ms, ev[2 * w], ev[2 * w + 1])); return ms * 1000 / 50; };
  for (int i = 0; i < 8; i++) CK(cudaMemcpyPeerAsync(d, 1, s, 0, 4, st));
  CK(cudaStreamSynchronize(st));
  for (int r = 0; r < 20; r++) {
    printf("%2d (a) waited:", r);
    for (int w = 0; w < 3; w++) { window(w); CK(cudaEventSynchronize(ev[2 * w + 1])); printf(" %.2f", us(w)); }
    printf("   (b) together:");
    for (int w = 0; w < 3; w++) window(w);
    CK(cudaStreamSynchronize(st));
    for (int w = 0; w < 3; w++) printf(" %.2f", us(w));
    printf("\n");
  }
  return 0;
}
