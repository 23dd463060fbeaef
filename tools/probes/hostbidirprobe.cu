// hostbidirprobe: every GPU copying to and from pinned host memory at once (cudaMemcpyAsync, 512 MiB,
// one stream per GPU and direction, each with its own host region), the plain measurement that
// host_all_bidir's forward and reverse figures are held to. Three ways, seven times each:
//   alone  each direction of each GPU by itself: N copies between two events;
//   equal  every stream N copies at once, each timed by its own events (how p2pbench times
//          host_all_bidir): a stream that ends first leaves the others a quieter tail;
//   held   every stream N timed copies and then N more untimed, so that each timed window runs
//          while every other stream still copies (as nvbandwidth's interfering copies of twice the
//          size do).
// Prints GB/s per stream (N × bytes / its window), the median of the seven, and for equal the
// total: all bytes over the longest window.
// Build: nvcc -O2 -o hostbidirprobe hostbidirprobe.cu; run: hostbidirprobe [N]
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
static const size_t bytes = 512ull << 20;
struct Flow { int dev; bool h2d; void *h, *d; cudaStream_t st; cudaEvent_t a, b; };
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size()/2]; }
static void issue(Flow &f, int timed, int untimed) {
  CK(cudaSetDevice(f.dev));
  void *dst = f.h2d ? f.d : f.h; const void *src = f.h2d ? f.h : f.d;
  CK(cudaEventRecord(f.a, f.st));
  for (int i = 0; i < timed; i++) CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, f.st));
  CK(cudaEventRecord(f.b, f.st));
  for (int i = 0; i < untimed; i++) CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, f.st));
}
static double ms(Flow &f) { CK(cudaSetDevice(f.dev)); CK(cudaStreamSynchronize(f.st)); float t; CK(cudaEventElapsedTime(&t, f.a, f.b)); return t; }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4, ndev;
  CK(cudaGetDeviceCount(&ndev));
  std::vector<Flow> flows;
  for (int d = 0; d < ndev; d++) for (int dir = 0; dir < 2; dir++) {
    Flow f{d, dir == 0};
    CK(cudaSetDevice(d));
    CK(cudaHostAlloc(&f.h, bytes, cudaHostAllocPortable)); CK(cudaMalloc(&f.d, bytes));
    CK(cudaMemset(f.d, 1, bytes)); for (size_t i = 0; i < bytes; i += 4096) ((char *)f.h)[i] = 1;
    CK(cudaStreamCreateWithFlags(&f.st, cudaStreamNonBlocking)); CK(cudaEventCreate(&f.a)); CK(cudaEventCreate(&f.b));
    flows.push_back(f);
  }
  const char *ways[] = {"alone", "equal", "held"};
  for (int way = 0; way < 3; way++) {
    std::vector<std::vector<double>> gbs(flows.size());
    std::vector<double> totals;
    for (int rep = 0; rep < 8; rep++) { // the first is a warm-up
      std::vector<double> t(flows.size());
      if (way == 0) {
        for (size_t i = 0; i < flows.size(); i++) { issue(flows[i], n, 0); t[i] = ms(flows[i]); }
      } else {
        for (auto &f : flows) issue(f, n, way == 2 ? n : 0);
        for (size_t i = 0; i < flows.size(); i++) t[i] = ms(flows[i]);
      }
      if (rep == 0) continue;
      for (size_t i = 0; i < flows.size(); i++) gbs[i].push_back(n * bytes / (t[i] * 1e6));
      totals.push_back(flows.size() * n * bytes / (*std::max_element(t.begin(), t.end()) * 1e6));
    }
    for (size_t i = 0; i < flows.size(); i++) {
      printf("%-5s GPU %d %s median %.2f GB/s  windows", ways[way], flows[i].dev, flows[i].h2d ? "h2d" : "d2h", median(gbs[i]));
      for (double g : gbs[i]) printf(" %.2f", g);
      printf("\n");
    }
    if (way == 1) printf("equal total (all bytes over the longest window) median %.2f GB/s\n", median(totals));
  }
  return 0;
}
