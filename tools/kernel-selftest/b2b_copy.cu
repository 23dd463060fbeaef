// b2b_copy.cu: small peer copies timed the way CUDA's p2pBandwidthLatencyTest
// times P2P latency, as an independent check of p2pbench's lat_copy figures
// on devices 0 and 1: N cudaMemcpyPeerAsync back to back on one stream,
// held by a spinning kernel while they are enqueued, between two events
// (elapsed / N: lat_copy_b2b); one copy alone between two events
// (lat_copy_device); and one copy enqueued and synchronised from the host
// (lat_copy_host). Pulled (issued on the destination, as p2pbench's read)
// and pushed (issued on the source, write), 4 B to 64 KiB, the median of
// REPS samples each.
//
//   nvcc -O2 -o b2b_copy tools/kernel-selftest/b2b_copy.cu && ./b2b_copy [N=50] [REPS=20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                       \
	do {                                                                               \
		cudaError_t e = (x);                                                           \
		if (e != cudaSuccess) {                                                        \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
			exit(1);                                                                   \
		}                                                                              \
	} while (0)

// hold spins until the host sets *flag (or about a second has passed), so
// that everything queued behind it starts together.
__global__ void hold(volatile int *flag) {
	long long t0 = clock64();
	while (*flag == 0 && clock64() - t0 < 2000000000LL) {
	}
}

static double median(std::vector<double> v) {
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
	int copies = argc > 1 ? atoi(argv[1]) : 50;
	int reps = argc > 2 ? atoi(argv[2]) : 20;
	int n = 0;
	CHECK(cudaGetDeviceCount(&n));
	if (n < 2) {
		fprintf(stderr, "needs two GPUs\n");
		return 1;
	}
	const size_t maxBytes = 64 << 10;
	void *buf[2];
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d));
		CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
		CHECK(cudaMalloc(&buf[d], maxBytes));
		CHECK(cudaMemset(buf[d], d, maxBytes));
	}
	int *flag;
	CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
	printf("copies per back-to-back sample: %d, samples: %d; medians in us\n", copies, reps);
	printf("%-5s %-4s %8s %12s %12s %12s\n", "pair", "way", "bytes", "b2b/copy", "one copy", "host e2e");
	for (int src = 0; src < 2; src++) {
		int dst = 1 - src;
		for (int push = 0; push < 2; push++) {
			int issuer = push ? src : dst;
			CHECK(cudaSetDevice(issuer));
			cudaStream_t s;
			cudaEvent_t start, stop;
			CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
			CHECK(cudaEventCreate(&start));
			CHECK(cudaEventCreate(&stop));
			int *dflag;
			CHECK(cudaHostGetDevicePointer((void **)&dflag, flag, 0));
			for (size_t bytes = 4; bytes <= maxBytes; bytes *= 4) {
				// timed runs count copies between the events: back to back, or one.
				auto timed = [&](int count) {
					std::vector<double> out;
					for (int r = 0; r < reps + 2; r++) {
						*(volatile int *)flag = 0;
						hold<<<1, 1, 0, s>>>(dflag);
						CHECK(cudaMemcpyPeerAsync(buf[dst], dst, buf[src], src, bytes, s)); // untimed warm-up
						CHECK(cudaEventRecord(start, s));
						for (int i = 0; i < count; i++) {
							CHECK(cudaMemcpyPeerAsync(buf[dst], dst, buf[src], src, bytes, s));
						}
						CHECK(cudaEventRecord(stop, s));
						*(volatile int *)flag = 1;
						CHECK(cudaEventSynchronize(stop));
						float ms = 0;
						CHECK(cudaEventElapsedTime(&ms, start, stop));
						if (r >= 2) {
							out.push_back(1e3 * ms / count);
						}
					}
					return median(out);
				};
				double b2b = timed(copies), one = timed(1);
				std::vector<double> host;
				for (int r = 0; r < reps + 2; r++) {
					auto t0 = std::chrono::steady_clock::now();
					CHECK(cudaMemcpyPeerAsync(buf[dst], dst, buf[src], src, bytes, s));
					CHECK(cudaStreamSynchronize(s));
					auto t1 = std::chrono::steady_clock::now();
					if (r >= 2) {
						host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
					}
				}
				printf("%d->%d %-4s %8zu %12.2f %12.2f %12.2f\n", src, dst, push ? "push" : "pull", bytes, b2b, one, median(host));
			}
			CHECK(cudaEventDestroy(start));
			CHECK(cudaEventDestroy(stop));
			CHECK(cudaStreamDestroy(s));
		}
	}
	return 0;
}
