/*
 * fakecuda.c: a stand-in libcuda.so.1 for the tests of package cuda.
 *
 * It simulates two devices whose "device memory" is host memory, so copies
 * are plain memcpy and device pointers are real addresses. Every entry point
 * has the real C signature of cuda.h, so a wrong argument type or order in
 * the Go binding shows up here as wrong values.
 *
 * What it checks, so that the tests can rely on it:
 *   - a context call made on a thread with no current context fails with
 *     CUDA_ERROR_INVALID_CONTEXT (the current context is per thread);
 *   - peer access follows the documented rules per ordered pair;
 *   - cuIpcOpenMemHandle_v2 compares all 64 bytes of the handle it gets by
 *     value against what cuIpcGetMemHandle produced;
 *   - the legacy (unversioned) symbols fail with CUDA_ERROR_NOT_SUPPORTED,
 *     so a binding that picks them instead of the _v2 ones fails its tests;
 *   - the p2pbench kernels that tests across processes need run (the
 *     latch holds nothing, fill and check write and check the pattern, SM
 *     copies are memmove); any other p2p_ kernel is NOT_SUPPORTED;
 *   - VMM memory (cuMemCreate) is shared for real between processes: it is
 *     a file, exported as a duplicate descriptor or, as a fabric handle, by
 *     name in the directory $FAKECUDA_FABRIC_DIR (the fake's IMEX: without
 *     it fabric memory is CUDA_ERROR_NOT_PERMITTED); copies reach a mapping
 *     only from devices given access; the teardown order is enforced and
 *     fake_vmm_live counts what is still alive, for leak checks.
 *     FAKECUDA_NO_FABRIC set: the devices do not support fabric handles.
 *
 * Build flags:
 *   -DNO_ATOMIC_CAPS  leave out cuDeviceGetP2PAtomicCapabilities (an optional symbol)
 *   -DNO_GREEN        leave out the green context entry points (optional symbols)
 *   -DOLD_DRIVER      leave out cuEventElapsedTime_v2 and cuDeviceGetUuid_v2 and
 *                     make their legacy forms work, as on drivers before 12.8
 *   -DNO_LAUNCH       leave out cuLaunchKernel (a required symbol)
 *
 * Test hooks are the exported functions named fake_*.
 *
 * All state is static: several builds of this file are loaded into one test
 * process, and static symbols cannot be interposed between them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx *CUcontext;
typedef struct fake_stream *CUstream;
typedef struct fake_event *CUevent;
typedef struct fake_module *CUmodule;
typedef struct fake_func *CUfunction;
typedef struct { char bytes[16]; } CUuuid;
typedef struct { char reserved[64]; } CUipcMemHandle;
typedef struct { char reserved[64]; } CUipcEventHandle;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
	CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
	CUDA_ERROR_NOT_PERMITTED = 800,
	CUDA_ERROR_NOT_SUPPORTED = 801,
};

#define NDEV 2
#define MAX_PARAMS 16
#define EVENT_INTERPROCESS 0x4
#define EVENT_DISABLE_TIMING 0x2
#define HOSTALLOC_DEVICEMAP 0x2

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

struct fake_ctx {
	int dev;
	int refs;                 /* primary context retain count */
	int peer_enabled[NDEV];   /* this context may access device i's context */
	struct fake_ctx *primary; /* a green context's primary context; NULL for a primary */
	int live;                 /* a green context not yet destroyed */
};

static struct fake_ctx ctxs[NDEV];
#define MAXGREEN 16
static struct fake_ctx greens[NDEV * MAXGREEN]; /* green contexts, as CUgreenCtx and CUcontext alike */
static int green_made, green_live;
static int initialized;
static CUresult init_result = CUDA_SUCCESS;
static __thread struct fake_ctx *current;

/* What the last call that needs a context saw. */
static int last_ctx_dev = -1;
static long last_ctx_tid;
static int calls_without_ctx;

/* Allocations: device memory, pinned host memory and IPC opens. */
struct alloc {
	void *p;
	size_t size;
	int dev;
	int host;
	unsigned flags;
	int ipc_opens;
	struct alloc *next;
};
static struct alloc *allocs;

/* Records for the tests. */
static unsigned long long launch_args[11];
static unsigned long long launch_params[MAX_PARAMS];
static int launch_nparams = -1;
static int launch_dev = -1;
static unsigned char ipc_seen[64];
static unsigned ipc_flags_seen;
static size_t module_len_seen;
static int func_attr_seen = -1, func_value_seen = -1;
static unsigned hostalloc_flags_seen;

static long tid(void) { return (long)syscall(SYS_gettid); }

/* need_ctx is the check every context call starts with. */
static CUresult need_ctx(void)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	LOCK();
	if (current == NULL) {
		calls_without_ctx++;
		UNLOCK();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	last_ctx_dev = current->dev;
	last_ctx_tid = tid();
	UNLOCK();
	return CUDA_SUCCESS;
}

static int valid_dev(CUdevice d) { return d >= 0 && d < NDEV; }

static struct alloc *find_alloc(void *p)
{
	for (struct alloc *a = allocs; a; a = a->next)
		if (a->p == p)
			return a;
	return NULL;
}

/* containing finds the allocation that holds [p, p+n). */
static struct alloc *containing(CUdeviceptr p, size_t n)
{
	for (struct alloc *a = allocs; a; a = a->next) {
		uintptr_t base = (uintptr_t)a->p;
		if (p >= base && p + n <= base + a->size)
			return a;
	}
	return NULL;
}

static struct alloc *new_alloc(size_t size, int dev, int host, unsigned flags)
{
	struct alloc *a = calloc(1, sizeof *a);
	a->p = aligned_alloc(256, (size + 255) / 256 * 256);
	a->size = size;
	a->dev = dev;
	a->host = host;
	a->flags = flags;
	LOCK();
	a->next = allocs;
	allocs = a;
	UNLOCK();
	return a;
}

static int free_alloc(void *p, int host)
{
	LOCK();
	for (struct alloc **pa = &allocs; *pa; pa = &(*pa)->next) {
		struct alloc *a = *pa;
		if (a->p == p && a->host == host) {
			*pa = a->next;
			UNLOCK();
			free(a->p);
			free(a);
			return 1;
		}
	}
	UNLOCK();
	return 0;
}

/* ---- errors ---- */

static const struct {
	CUresult code;
	const char *name, *desc;
} errors[] = {
	{CUDA_SUCCESS, "CUDA_SUCCESS", "fake: no error"},
	{CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "fake: invalid argument"},
	{CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "fake: out of memory"},
	{CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "fake: initialization error"},
	{CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "fake: no CUDA-capable device is detected"},
	{CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "fake: invalid device ordinal"},
	{CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "fake: invalid device context"},
	{CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "fake: peer access is not supported between these two devices"},
	{CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "fake: a PTX JIT compilation failed"},
	{CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "fake: invalid resource handle"},
	{CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "fake: named symbol not found"},
	{CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "fake: device not ready"},
	{CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "fake: an illegal memory access was encountered"},
	{CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "fake: peer access is already enabled"},
	{CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "fake: peer access has not been enabled"},
	{CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "fake: operation not permitted"},
	{CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "fake: operation not supported"},
};

CUresult cuGetErrorName(CUresult code, const char **s)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == code) {
			*s = errors[i].name;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult code, const char **s)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == code) {
			*s = errors[i].desc;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

/* ---- initialisation and devices ---- */

CUresult cuInit(unsigned flags)
{
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (init_result != CUDA_SUCCESS)
		return init_result;
	LOCK();
	if (!initialized) {
		for (int i = 0; i < NDEV; i++)
			ctxs[i].dev = i;
		initialized = 1;
	}
	UNLOCK();
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 13000;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = NDEV;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!valid_dev(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Fake H200 %d", d);
	return CUDA_SUCCESS;
}

static void fill_uuid(CUuuid *u, CUdevice d)
{
	for (int i = 0; i < 16; i++)
		u->bytes[i] = (char)(0x10 * d + i);
}

#ifndef OLD_DRIVER
CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	fill_uuid(u, d);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { return CUDA_ERROR_NOT_SUPPORTED; }
#else
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	fill_uuid(u, d);
	u->bytes[15] = (char)0xee; /* marks the legacy path */
	return CUDA_SUCCESS;
}
#endif

CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(bus, (size_t)len, "0000:%02X:00.0", d == 0 ? 0x18 : 0x2A);
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = (size_t)143771 << 20;
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(unsigned *bytes, CUdevice d) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attr) {
	case 13: *v = 1980000; break;  /* CLOCK_RATE */
	case 16: *v = 132; break;      /* MULTIPROCESSOR_COUNT */
	case 36: *v = 3201000; break;  /* MEMORY_CLOCK_RATE */
	case 37: *v = 6144; break;     /* GLOBAL_MEMORY_BUS_WIDTH */
	case 38: *v = 52428800; break; /* L2_CACHE_SIZE */
	case 39: *v = 2048; break;     /* MAX_THREADS_PER_MULTIPROCESSOR */
	case 40: *v = 3; break;        /* ASYNC_ENGINE_COUNT */
	case 41: *v = 1; break;        /* UNIFIED_ADDRESSING */
	case 75: *v = 9; break;        /* COMPUTE_CAPABILITY_MAJOR */
	case 76: *v = 0; break;        /* COMPUTE_CAPABILITY_MINOR */
	case 102: *v = 1; break;       /* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
	case 103: *v = 1; break;       /* HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED */
	case 125: *v = 1; break;       /* IPC_EVENT_SUPPORTED */
	case 128: *v = getenv("FAKECUDA_NO_FABRIC") == NULL; break; /* HANDLE_TYPE_FABRIC_SUPPORTED */
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer)
{
	if (!valid_dev(d) || !valid_dev(peer))
		return CUDA_ERROR_INVALID_DEVICE;
	*can = d != peer;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetP2PAttribute(int *v, int attr, CUdevice src, CUdevice dst)
{
	if (!valid_dev(src) || !valid_dev(dst) || src == dst)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case 1: *v = 0; break; /* PERFORMANCE_RANK */
	case 2: *v = 1; break; /* ACCESS_SUPPORTED */
	case 3: *v = 1; break; /* NATIVE_ATOMIC_SUPPORTED */
	case 4: *v = 1; break; /* CUDA_ARRAY_ACCESS_SUPPORTED */
	case 5: *v = 0; break; /* ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED */
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

#ifndef NO_ATOMIC_CAPS
/* Answers 0x80|op for each op, so the tests can see each slot was filled
 * from its own operation. */
CUresult cuDeviceGetP2PAtomicCapabilities(unsigned *caps, const int *ops, unsigned count, CUdevice src, CUdevice dst)
{
	if (!valid_dev(src) || !valid_dev(dst) || src == dst)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!caps || !ops || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < count; i++) {
		if (ops[i] < 0 || ops[i] > 12)
			return CUDA_ERROR_INVALID_VALUE;
		caps[i] = 0x80u | (unsigned)ops[i];
	}
	return CUDA_SUCCESS;
}
#endif

/* ---- contexts ---- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	LOCK();
	ctxs[d].refs++;
	UNLOCK();
	*c = &ctxs[d];
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	LOCK();
	if (ctxs[d].refs == 0) {
		UNLOCK();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (--ctxs[d].refs == 0)
		memset(ctxs[d].peer_enabled, 0, sizeof ctxs[d].peer_enabled);
	UNLOCK();
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice d) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuCtxSetCurrent(CUcontext c)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	int green = c >= &greens[0] && c < &greens[NDEV * MAXGREEN];
	if (c != NULL && (c < &ctxs[0] || c >= &ctxs[NDEV]) && !(green && c->live))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	*d = current->dev;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) { return need_ctx(); }

static int valid_ctx(CUcontext c)
{
	return (c >= &ctxs[0] && c < &ctxs[NDEV]) || (c >= &greens[0] && c < &greens[NDEV * MAXGREEN] && c->live);
}

/* base is the context whose memory and peers c has: its primary context. */
static struct fake_ctx *base(struct fake_ctx *c) { return c->primary ? c->primary : c; }

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!valid_ctx(peer))
		return CUDA_ERROR_INVALID_CONTEXT;
	/* What the 2x H200 driver answers, where the documentation says
	 * CUDA_ERROR_INVALID_CONTEXT. */
	if (base(peer) == base(current))
		return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
	LOCK();
	int *on = &base(current)->peer_enabled[peer->dev];
	r = *on ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_SUCCESS;
	*on = 1;
	UNLOCK();
	return r;
}

CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!valid_ctx(peer))
		return CUDA_ERROR_INVALID_CONTEXT;
	LOCK();
	int *on = &base(current)->peer_enabled[peer->dev];
	r = *on ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
	*on = 0;
	UNLOCK();
	return r;
}

/* ---- memory ---- */

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!p || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	*p = (CUdeviceptr)(uintptr_t)new_alloc(bytes, current->dev, 0, 0)->p;
	return CUDA_SUCCESS;
}

CUresult cuMemAlloc(unsigned *p, unsigned bytes) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuMemFree_v2(CUdeviceptr p)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	return free_alloc((void *)(uintptr_t)p, 0) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemFree(unsigned p) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	*total = (size_t)143771 << 20;
	*free_bytes = *total - ((size_t)current->dev + 1) * (1 << 20);
	return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(unsigned *free_bytes, unsigned *total) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!pp || bytes == 0 || (flags & ~0x7u))
		return CUDA_ERROR_INVALID_VALUE;
	hostalloc_flags_seen = flags;
	*pp = new_alloc(bytes, current->dev, 1, flags)->p;
	return CUDA_SUCCESS;
}

/* Registered host memory is an alloc of host kind 2: the caller's memory,
 * never freed here. */
static unsigned hostregister_flags_seen;
static int hostregistered;

CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!p || bytes == 0 || (flags & ~0xFu))
		return CUDA_ERROR_INVALID_VALUE;
	LOCK();
	int taken = containing((CUdeviceptr)(uintptr_t)p, 1) != NULL;
	UNLOCK();
	if (taken)
		return (CUresult)712; /* CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED */
	struct alloc *a = calloc(1, sizeof *a);
	a->p = p;
	a->size = bytes;
	a->dev = current->dev;
	a->host = 2;
	a->flags = flags; /* PORTABLE and DEVICEMAP: the bits of cuMemHostAlloc's */
	LOCK();
	a->next = allocs;
	allocs = a;
	hostregister_flags_seen = flags;
	hostregistered++;
	UNLOCK();
	return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *p)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	for (struct alloc **pa = &allocs; *pa; pa = &(*pa)->next) {
		struct alloc *a = *pa;
		if (a->p == p && a->host == 2) {
			*pa = a->next;
			hostregistered--;
			UNLOCK();
			free(a);
			return CUDA_SUCCESS;
		}
	}
	UNLOCK();
	return (CUresult)713; /* CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	struct alloc *a = find_alloc(p);
	int ok = a && a->host && (a->flags & HOSTALLOC_DEVICEMAP) && flags == 0;
	UNLOCK();
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer(unsigned *d, void *p, unsigned flags) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuMemFreeHost(void *p)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	return free_alloc(p, 1) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static int vmm_dev(CUdeviceptr p, size_t n, int dev);

/* checked reports whether [p, p+n) lies inside one allocation, or inside
 * one VMM mapping the current context's device may access. */
static int checked(CUdeviceptr p, size_t n)
{
	LOCK();
	int ok = containing(p, n) != NULL || vmm_dev(p, n, current->dev) >= 0;
	UNLOCK();
	return ok;
}

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, CUstream s)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!checked(p, n * 4))
		return CUDA_ERROR_INVALID_VALUE;
	unsigned *w = (unsigned *)(uintptr_t)p;
	for (size_t i = 0; i < n; i++)
		w[i] = v;
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!checked(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(unsigned dst, const void *src, unsigned n) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!checked(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH(void *dst, unsigned src, unsigned n) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!checked(dst, n) || !checked(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

static CUresult memcpy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!valid_ctx(dctx) || !valid_ctx(sctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	LOCK();
	struct alloc *d = containing(dst, n), *s = containing(src, n);
	int ddev = d ? d->dev : vmm_dev(dst, n, dctx->dev);
	int sdev = s ? s->dev : vmm_dev(src, n, sctx->dev);
	int ok = ddev == dctx->dev && sdev == sctx->dev;
	UNLOCK();
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n)
{
	return memcpy_peer(dst, dctx, src, sctx, n);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s)
{
	return memcpy_peer(dst, dctx, src, sctx, n);
}

/* ---- modules and launches ---- */

struct fake_module {
	char *ptx;
};

struct fake_func {
	char name[64];
	int nparams;
	int sizes[MAX_PARAMS];
};

CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned nopt, int *opts, void **vals)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	const char *ptx = image;
	module_len_seen = strlen(ptx);
	if (strstr(ptx, "SYNTAX_ERROR")) {
		const char *msg = "ptxas fatal   : fake.ptx, line 3; error   : syntax error";
		char *buf = NULL;
		unsigned i_size = nopt;
		for (unsigned i = 0; i < nopt; i++) {
			if (opts[i] == 5)
				buf = vals[i];
			if (opts[i] == 6)
				i_size = i;
		}
		if (buf && i_size < nopt) {
			size_t cap = (size_t)(uintptr_t)vals[i_size];
			size_t n = strlen(msg) + 1 < cap ? strlen(msg) + 1 : cap;
			memcpy(buf, msg, n);
			if (n > 0)
				buf[n - 1] = 0;
			vals[i_size] = (void *)(uintptr_t)n;
		}
		return CUDA_ERROR_INVALID_PTX;
	}
	/* PTX opens with .version, after comments. */
	const char *v = ptx;
	for (;;) {
		v += strspn(v, " \t\r\n");
		if (strncmp(v, "//", 2) != 0)
			break;
		v += strcspn(v, "\n");
	}
	if (strncmp(v, ".version", 8) != 0)
		return CUDA_ERROR_INVALID_PTX;
	struct fake_module *mod = calloc(1, sizeof *mod);
	mod->ptx = strdup(ptx);
	*m = mod;
	return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule m)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	free(m->ptx);
	free(m);
	return CUDA_SUCCESS;
}

/* cuModuleGetFunction finds ".entry name(" and reads the parameter sizes
 * from the .param declarations up to ")". */
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	char pat[256];
	snprintf(pat, sizeof pat, ".entry %s(", name);
	const char *p = strstr(m->ptx, pat);
	if (!p)
		return CUDA_ERROR_NOT_FOUND;
	p += strlen(pat);
	const char *end = strchr(p, ')');
	struct fake_func *fn = calloc(1, sizeof *fn);
	snprintf(fn->name, sizeof fn->name, "%s", name);
	while ((p = strstr(p, ".param")) != NULL && p < end && fn->nparams < MAX_PARAMS) {
		p += 6;
		while (*p == ' ')
			p++;
		fn->sizes[fn->nparams++] = (strncmp(p + 2, "64", 2) == 0) ? 8 : 4;
	}
	*f = fn;
	return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, int attr, int value)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	func_attr_seen = attr;
	func_value_seen = value;
	return CUDA_SUCCESS;
}

#ifndef NO_LAUNCH
/* pattern is kernels.Pattern: the verification word at index i. */
static unsigned pattern(unsigned seed, unsigned long long i)
{
	unsigned x = (unsigned)i ^ ((unsigned)(i >> 32) * 0x85ebca6bu) ^ seed;
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

#define PARAM(i, type) (*(type *)params[i])

/* run_kernel runs the p2pbench kernels a test of several processes needs
 * on this host-memory "GPU", at launch: streams run as work is enqueued, so
 * the latch holds nothing; p2p_fill and p2p_check write and check the
 * verification pattern; every SM copy is a memmove (none for a repetition
 * count of 0: Reps copies leave what one leaves). Any other p2p_ kernel
 * is NOT_SUPPORTED, so that no figure comes from work the fake did not do;
 * the kernels of the binding's own tests are only recorded. */
static CUresult run_kernel(struct fake_func *f, void **params)
{
	if (strncmp(f->name, "p2p_", 4) != 0 || strcmp(f->name, "p2p_latch") == 0)
		return CUDA_SUCCESS;
	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	if (strcmp(f->name, "p2p_fill") == 0 || strcmp(f->name, "p2p_check") == 0) {
		unsigned *w = (unsigned *)(uintptr_t)PARAM(0, unsigned long long);
		unsigned long long words = PARAM(1, unsigned long long);
		unsigned seed = PARAM(2, unsigned);
		if (!checked((uintptr_t)w, words * 4))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		if (f->name[4] == 'f') {
			for (unsigned long long i = 0; i < words; i++)
				w[i] = pattern(seed, i);
			return CUDA_SUCCESS;
		}
		unsigned long long *res = (unsigned long long *)(uintptr_t)PARAM(3, unsigned long long);
		if (!checked((uintptr_t)res, 16))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		for (unsigned long long i = 0; i < words; i++)
			if (w[i] != pattern(seed, i)) {
				if (i < res[0])
					res[0] = i;
				res[1]++;
			}
		return CUDA_SUCCESS;
	}
	if (strncmp(f->name, "p2p_copy", 8) == 0) {
		unsigned long long dst = PARAM(0, unsigned long long), src = PARAM(1, unsigned long long), n = PARAM(2, unsigned long long);
		unsigned reps = f->nparams > 3 ? PARAM(3, unsigned) : 1;
		if (reps == 0)
			return CUDA_SUCCESS;
		if (!checked(dst, n) || !checked(src, n))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			unsigned bx, unsigned by, unsigned bz, unsigned shared,
			CUstream s, void **params, void **extra)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	LOCK();
	unsigned long long a[11] = {
		(uintptr_t)f, gx, gy, gz, bx, by, bz, shared,
		(uintptr_t)s, (uintptr_t)params, (uintptr_t)extra,
	};
	memcpy(launch_args, a, sizeof a);
	launch_nparams = f->nparams;
	for (int i = 0; i < f->nparams; i++) {
		launch_params[i] = 0;
		if (params && params[i])
			memcpy(&launch_params[i], params[i], (size_t)f->sizes[i]);
	}
	launch_dev = current->dev;
	UNLOCK();
	return run_kernel(f, params);
}
#endif

/* ---- streams and events ---- */

struct fake_stream {
	int dev;
	unsigned flags;
};

struct fake_event {
	int dev;
	unsigned flags;
	int recorded;
	double ms;
	int opened; /* came from cuIpcOpenEventHandle */
};

/* clock_offset_ms moves the events' clock on (fake_advance_clock_ms), so a
 * test sets the time between two records instead of sleeping it. */
static double clock_offset_ms;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6 + clock_offset_ms;
}

CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	struct fake_stream *st = calloc(1, sizeof *st);
	st->dev = current->dev;
	st->flags = flags;
	*s = st;
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream s)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	free(s);
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream s) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuStreamSynchronize(CUstream s) { return need_ctx(); }

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	return e && flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	/* The real driver insists on both for interprocess events. */
	if ((flags & EVENT_INTERPROCESS) && !(flags & EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_VALUE;
	struct fake_event *ev = calloc(1, sizeof *ev);
	ev->dev = current->dev;
	ev->flags = flags;
	*e = ev;
	return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent e)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!e->opened)
		free(e);
	return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuEventRecord(CUevent e, CUstream s)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	e->recorded = 1;
	e->ms = now_ms();
	return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent e)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!ms || !a || !b || (a->flags & EVENT_DISABLE_TIMING) || (b->flags & EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!a->recorded || !b->recorded)
		return CUDA_ERROR_NOT_READY;
	*ms = (float)(b->ms - a->ms);
	return CUDA_SUCCESS;
}

#ifndef OLD_DRIVER
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) { return elapsed(ms, a, b); }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return CUDA_ERROR_NOT_SUPPORTED; }
#else
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return elapsed(ms, a, b); }
#endif

/* ---- IPC ---- */

/* ipc_pattern fills a handle for the object at p: the address in the first
 * eight bytes, then a pattern that depends on every byte position. */
static void ipc_pattern(char out[64], uintptr_t p, unsigned char kind)
{
	memcpy(out, &p, sizeof p);
	for (int i = 8; i < 64; i++)
		out[i] = (char)(kind ^ (unsigned char)(i * 37 + 11));
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	struct alloc *a = find_alloc((void *)(uintptr_t)p);
	int ok = a && !a->host;
	UNLOCK();
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	ipc_pattern(h->reserved, (uintptr_t)p, 0xA5);
	return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	memcpy(ipc_seen, h.reserved, 64);
	ipc_flags_seen = flags;
	UNLOCK();
	if (flags != 1)
		return CUDA_ERROR_INVALID_VALUE;
	uintptr_t addr;
	memcpy(&addr, h.reserved, sizeof addr);
	char want[64];
	ipc_pattern(want, addr, 0xA5);
	if (memcmp(want, h.reserved, 64) != 0)
		return CUDA_ERROR_INVALID_HANDLE;
	LOCK();
	struct alloc *a = find_alloc((void *)addr);
	if (a && !a->host)
		a->ipc_opens++;
	UNLOCK();
	if (!a || a->host)
		return CUDA_ERROR_INVALID_HANDLE;
	*p = (CUdeviceptr)addr; /* the same address for every open */
	return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned flags) { return CUDA_ERROR_NOT_SUPPORTED; }

CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	struct alloc *a = find_alloc((void *)(uintptr_t)p);
	r = a && a->ipc_opens > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		a->ipc_opens--;
	UNLOCK();
	return r;
}

CUresult cuIpcGetEventHandle(CUipcEventHandle *h, CUevent e)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!(e->flags & EVENT_INTERPROCESS))
		return CUDA_ERROR_INVALID_VALUE;
	ipc_pattern(h->reserved, (uintptr_t)e, 0x5A);
	return CUDA_SUCCESS;
}

CUresult cuIpcOpenEventHandle(CUevent *e, CUipcEventHandle h)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	uintptr_t addr;
	memcpy(&addr, h.reserved, sizeof addr);
	char want[64];
	ipc_pattern(want, addr, 0x5A);
	if (memcmp(want, h.reserved, 64) != 0)
		return CUDA_ERROR_INVALID_HANDLE;
	*e = (CUevent)addr;
	return CUDA_SUCCESS;
}

/* ---- virtual memory management ---- */

typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct {
	int type;
	int id;
} CUmemLocation;
typedef struct {
	int type;
	int requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;
typedef struct {
	CUmemLocation location;
	int flags;
} CUmemAccessDesc;
typedef struct { unsigned char data[64]; } CUmemFabricHandle;

#define VMM_GRANULARITY ((size_t)2 << 20)
#define VMM_HEADER 4096 /* the memory file's first page: a struct vmm_header */
#define HANDLE_POSIX_FD 0x1
#define HANDLE_FABRIC 0x8
#define VMM_MAGIC "fakecuda-memory"
#define FABRIC_MAGIC "fakecuda-fabric"

/* The memory file starts with this page, so an importer learns the device
 * and size of what it maps. */
struct vmm_header {
	char magic[16];
	int dev;
	size_t size;
};

/* A handle from cuMemCreate or an import: its own descriptor of the memory
 * file. Freed once released and unmapped everywhere in this process. */
struct vmm_handle {
	int fd;
	size_t size;
	int dev;
	int types;
	int released;
	int maps;
	char fabric_name[32]; /* the file in $FAKECUDA_FABRIC_DIR, for the creator to unlink */
	struct vmm_handle *next;
};

struct vmm_range {
	uintptr_t base;
	size_t size;
	struct vmm_range *next;
};

struct vmm_map {
	uintptr_t base;
	size_t size;
	struct vmm_handle *h;
	int access[NDEV];
	struct vmm_map *next;
};

static struct vmm_handle *vmm_handles;
static struct vmm_range *vmm_ranges;
static struct vmm_map *vmm_maps;
static int vmm_fabric_serial;
static int last_prop[5] = {-1, -1, -1, -1, -1}; /* type, handle types, location type, id, nonzero tail */
static int last_access_count = -1;
static int last_access[3 * 4];

/* vmm_dev returns the device whose memory holds [p, p+n) when it lies in
 * one VMM mapping that dev may access, else -1. Called locked. */
static int vmm_dev(CUdeviceptr p, size_t n, int dev)
{
	for (struct vmm_map *m = vmm_maps; m; m = m->next)
		if (p >= m->base && p + n <= m->base + m->size && p + n >= p)
			return dev >= 0 && dev < NDEV && m->access[dev] ? m->h->dev : -1;
	return -1;
}

/* valid_prop checks a CUmemAllocationProp as the driver would and
 * remembers its fields for the layout test. Called locked. */
static CUresult valid_prop(const CUmemAllocationProp *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	int tail = p->win32HandleMetaData != NULL;
	for (int i = 0; i < 8; i++)
		tail |= ((const unsigned char *)&p->allocFlags)[i];
	int v[5] = {p->type, p->requestedHandleTypes, p->location.type, p->location.id, tail};
	memcpy(last_prop, v, sizeof v);
	if (p->type != 1 || p->location.type != 1 || !valid_dev(p->location.id) || tail)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->requestedHandleTypes & ~(HANDLE_POSIX_FD | HANDLE_FABRIC))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p, int option)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	r = valid_prop(p);
	UNLOCK();
	if (r)
		return r;
	if (!g || (option != 0 && option != 1))
		return CUDA_ERROR_INVALID_VALUE;
	*g = VMM_GRANULARITY;
	return CUDA_SUCCESS;
}

static const char *fabric_dir(void) { return getenv("FAKECUDA_FABRIC_DIR"); }

/* fabric_file creates the memory file of fabric memory in the fabric
 * directory, named in name. */
static int fabric_file(char name[32])
{
	const char *dir = fabric_dir();
	if (!dir)
		return -1;
	LOCK();
	int n = ++vmm_fabric_serial;
	UNLOCK();
	snprintf(name, 32, "f-%d-%d", (int)getpid(), n);
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *out, size_t size, const CUmemAllocationProp *p, unsigned long long flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	r = valid_prop(p);
	UNLOCK();
	if (r)
		return r;
	if (!out || flags != 0 || size == 0 || size % VMM_GRANULARITY != 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct vmm_handle *h = calloc(1, sizeof *h);
	h->size = size;
	h->dev = p->location.id;
	h->types = p->requestedHandleTypes;
	if (h->types & HANDLE_FABRIC) {
		if (getenv("FAKECUDA_NO_FABRIC")) {
			free(h);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		h->fd = fabric_file(h->fabric_name);
		if (h->fd < 0) {
			free(h);
			return CUDA_ERROR_NOT_PERMITTED; /* no IMEX channel: what the real driver says */
		}
	} else {
		h->fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
	}
	struct vmm_header hdr = {VMM_MAGIC, h->dev, size};
	if (h->fd < 0 || ftruncate(h->fd, (off_t)(VMM_HEADER + size)) != 0 ||
	    pwrite(h->fd, &hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr) {
		if (h->fd >= 0)
			close(h->fd);
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	LOCK();
	h->next = vmm_handles;
	vmm_handles = h;
	UNLOCK();
	*out = (CUmemGenericAllocationHandle)(uintptr_t)h;
	return CUDA_SUCCESS;
}

/* find_handle returns the live handle h names, or NULL. Called locked. */
static struct vmm_handle *find_handle(CUmemGenericAllocationHandle hv)
{
	for (struct vmm_handle *h = vmm_handles; h; h = h->next)
		if ((CUmemGenericAllocationHandle)(uintptr_t)h == hv && !h->released)
			return h;
	return NULL;
}

/* drop_handle frees h once it is released and mapped nowhere; the creator
 * of fabric memory removes its file then. Called locked. */
static void drop_handle(struct vmm_handle *h)
{
	if (!h->released || h->maps > 0)
		return;
	for (struct vmm_handle **ph = &vmm_handles; *ph; ph = &(*ph)->next)
		if (*ph == h) {
			*ph = h->next;
			break;
		}
	if (h->fabric_name[0] && fabric_dir()) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", fabric_dir(), h->fabric_name);
		unlink(path);
	}
	close(h->fd);
	free(h);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle hv)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	struct vmm_handle *h = find_handle(hv);
	if (h) {
		h->released = 1;
		drop_handle(h);
	}
	UNLOCK();
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!p || size == 0 || size % VMM_GRANULARITY != 0 || addr != 0 || flags != 0 ||
	    (align != 0 && (align & (align - 1)) != 0))
		return CUDA_ERROR_INVALID_VALUE;
	if (align < VMM_GRANULARITY)
		align = VMM_GRANULARITY;
	/* Over-reserve, then trim to the alignment. */
	char *m = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	uintptr_t base = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
	if (base > (uintptr_t)m)
		munmap(m, base - (uintptr_t)m);
	if ((uintptr_t)m + size + align > base + size)
		munmap((void *)(base + size), (uintptr_t)m + size + align - (base + size));
	struct vmm_range *rg = calloc(1, sizeof *rg);
	rg->base = base;
	rg->size = size;
	LOCK();
	rg->next = vmm_ranges;
	vmm_ranges = rg;
	UNLOCK();
	*p = base;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr p, size_t size)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	for (struct vmm_map *m = vmm_maps; m; m = m->next)
		if (m->base >= p && m->base < p + size) {
			UNLOCK();
			return CUDA_ERROR_INVALID_VALUE; /* unmap first */
		}
	for (struct vmm_range **pr = &vmm_ranges; *pr; pr = &(*pr)->next) {
		struct vmm_range *rg = *pr;
		if (rg->base == p && rg->size == size) {
			*pr = rg->next;
			UNLOCK();
			munmap((void *)rg->base, rg->size);
			free(rg);
			return CUDA_SUCCESS;
		}
	}
	UNLOCK();
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle hv, unsigned long long flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	struct vmm_handle *h = find_handle(hv);
	int inside = 0;
	for (struct vmm_range *rg = vmm_ranges; rg; rg = rg->next)
		inside |= p >= rg->base && p + size <= rg->base + rg->size;
	int taken = 0;
	for (struct vmm_map *m = vmm_maps; m; m = m->next)
		taken |= p < m->base + m->size && m->base < p + size;
	if (!h) {
		UNLOCK();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (!inside || taken || flags != 0 || size == 0 || offset % VMM_GRANULARITY != 0 ||
	    size % VMM_GRANULARITY != 0 || offset + size > h->size) {
		UNLOCK();
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (mmap((void *)p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, h->fd, (off_t)(VMM_HEADER + offset)) == MAP_FAILED) {
		UNLOCK();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	struct vmm_map *m = calloc(1, sizeof *m);
	m->base = p;
	m->size = size;
	m->h = h;
	h->maps++;
	m->next = vmm_maps;
	vmm_maps = m;
	UNLOCK();
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	LOCK();
	for (struct vmm_map **pm = &vmm_maps; *pm; pm = &(*pm)->next) {
		struct vmm_map *m = *pm;
		if (m->base == p && m->size == size) {
			*pm = m->next;
			/* The range stays reserved. */
			mmap((void *)p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
			m->h->maps--;
			drop_handle(m->h);
			free(m);
			UNLOCK();
			return CUDA_SUCCESS;
		}
	}
	UNLOCK();
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!desc || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	LOCK();
	last_access_count = (int)count;
	for (size_t i = 0; i < count && i < 4; i++) {
		last_access[3 * i] = desc[i].location.type;
		last_access[3 * i + 1] = desc[i].location.id;
		last_access[3 * i + 2] = desc[i].flags;
	}
	struct vmm_map *m = vmm_maps;
	while (m && !(m->base == p && m->size == size))
		m = m->next;
	r = m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++)
		if (desc[i].location.type != 1 || !valid_dev(desc[i].location.id) || desc[i].flags != 3)
			r = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++)
		m->access[desc[i].location.id] = 1;
	UNLOCK();
	return r;
}

/* fabric_pattern fills a fabric handle: the magic, the file's name, then a
 * pattern on every remaining byte, so an import checks all 64 arrived. */
static void fabric_pattern(unsigned char out[64], const char *name)
{
	memset(out, 0, 64);
	memcpy(out, FABRIC_MAGIC, 16);
	strncpy((char *)out + 16, name, 31);
	for (int i = 48; i < 64; i++)
		out[i] = (unsigned char)(i * 29 + 5);
}

CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle hv, int type, unsigned long long flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!out || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	LOCK();
	struct vmm_handle *h = find_handle(hv);
	if (!h) {
		UNLOCK();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if (!(h->types & type) || (type != HANDLE_POSIX_FD && type != HANDLE_FABRIC)) {
		UNLOCK();
		return CUDA_ERROR_INVALID_VALUE; /* not requested at cuMemCreate */
	}
	if (type == HANDLE_FABRIC)
		fabric_pattern(((CUmemFabricHandle *)out)->data, h->fabric_name);
	else
		*(int *)out = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
	UNLOCK();
	return CUDA_SUCCESS;
}

/* import_fd makes a handle of the memory file fd (a descriptor this
 * process now owns). */
static CUresult import_fd(CUmemGenericAllocationHandle *out, int fd, int type)
{
	struct vmm_header hdr;
	if (fd < 0 || pread(fd, &hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr || memcmp(hdr.magic, VMM_MAGIC, 16) != 0) {
		if (fd >= 0)
			close(fd);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	struct vmm_handle *h = calloc(1, sizeof *h);
	h->fd = fd;
	h->size = hdr.size;
	h->dev = hdr.dev;
	h->types = type;
	LOCK();
	h->next = vmm_handles;
	vmm_handles = h;
	UNLOCK();
	*out = (CUmemGenericAllocationHandle)(uintptr_t)h;
	return CUDA_SUCCESS;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *out, void *os, int type)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (type == HANDLE_POSIX_FD)
		return import_fd(out, fcntl((int)(intptr_t)os, F_DUPFD_CLOEXEC, 0), type);
	if (type != HANDLE_FABRIC || !os)
		return CUDA_ERROR_INVALID_VALUE;
	const unsigned char *fh = ((const CUmemFabricHandle *)os)->data;
	char name[32] = {0};
	memcpy(name, fh + 16, 31);
	unsigned char want[64];
	fabric_pattern(want, name);
	if (memcmp(want, fh, 64) != 0 || !fabric_dir())
		return CUDA_ERROR_INVALID_HANDLE;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", fabric_dir(), name);
	return import_fd(out, open(path, O_RDWR | O_CLOEXEC), type);
}

/* ---- green contexts ---- */
#ifndef NO_GREEN

/* A CUdevResource: its type, padding, then the SM count (CUDA 12.4's
 * layout); a CUdevResourceDesc is a pointer to the fake's record of it. */
struct fake_resource {
	int type;
	unsigned char pad[92];
	unsigned sm_count;
};
static struct fake_resource descs[NDEV * MAXGREEN];
static int ndescs;

CUresult cuDeviceGetDevResource(CUdevice d, struct fake_resource *res, int type)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!res || type != 1) /* CU_DEV_RESOURCE_TYPE_SM */
		return CUDA_ERROR_INVALID_VALUE;
	memset(res, 0, sizeof *res);
	res->type = 1;
	res->sm_count = 132;
	return CUDA_SUCCESS;
}

CUresult cuDevResourceGenerateDesc(void **desc, struct fake_resource *res, unsigned n)
{
	if (!desc || !res || n != 1 || res->type != 1)
		return CUDA_ERROR_INVALID_VALUE;
	LOCK();
	int k = ndescs++ % (NDEV * MAXGREEN);
	descs[k] = *res;
	UNLOCK();
	*desc = &descs[k];
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxCreate(struct fake_ctx **g, void *desc, CUdevice d, unsigned flags)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!valid_dev(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!g || !desc || flags != 1) /* CU_GREEN_CTX_DEFAULT_STREAM */
		return CUDA_ERROR_INVALID_VALUE;
	LOCK();
	struct fake_ctx *c = NULL;
	for (int i = 0; i < NDEV * MAXGREEN && !c; i++)
		if (!greens[i].live)
			c = &greens[i];
	if (!c) {
		UNLOCK();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memset(c, 0, sizeof *c);
	c->dev = d;
	c->primary = &ctxs[d];
	c->live = 1;
	green_made++;
	green_live++;
	UNLOCK();
	*g = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxFromGreenCtx(CUcontext *out, struct fake_ctx *g)
{
	if (!out || !g || !valid_ctx(g) || !g->primary)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = g;
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxDestroy(struct fake_ctx *g)
{
	if (!g || !valid_ctx(g) || !g->primary)
		return CUDA_ERROR_INVALID_HANDLE;
	LOCK();
	g->live = 0;
	green_live--;
	if (current == g)
		current = NULL;
	UNLOCK();
	return CUDA_SUCCESS;
}

CUresult cuGreenCtxStreamCreate(CUstream *s, struct fake_ctx *g, unsigned flags, int priority)
{
	if (!s || !g || !valid_ctx(g) || !g->primary)
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags != 1) /* CU_STREAM_NON_BLOCKING */
		return CUDA_ERROR_INVALID_VALUE;
	struct fake_stream *st = calloc(1, sizeof *st);
	st->dev = g->dev;
	st->flags = flags | 0x100; /* marks a green context's stream for the tests */
	*s = st;
	return CUDA_SUCCESS;
}
#endif

/* ---- test hooks ---- */

/* fake_reset forgets peer access, records and counters; allocations stay. */
void fake_reset(void)
{
	LOCK();
	for (int i = 0; i < NDEV; i++)
		memset(ctxs[i].peer_enabled, 0, sizeof ctxs[i].peer_enabled);
	last_ctx_dev = -1;
	last_ctx_tid = 0;
	calls_without_ctx = 0;
	launch_nparams = -1;
	launch_dev = -1;
	memset(launch_args, 0, sizeof launch_args);
	memset(ipc_seen, 0, sizeof ipc_seen);
	ipc_flags_seen = 0;
	module_len_seen = 0;
	func_attr_seen = func_value_seen = -1;
	hostalloc_flags_seen = 0;
	hostregister_flags_seen = 0;
	init_result = CUDA_SUCCESS;
	UNLOCK();
}

/* fake_set_init_result makes later cuInit calls fail with r (0 to succeed). */
void fake_set_init_result(int r) { init_result = r; }

int fake_last_ctx_device(void) { return last_ctx_dev; }
/* fake_current_device is the device of the calling thread's current context, or -1. */
int fake_current_device(void) { return current ? current->dev : -1; }
void fake_green_counts(int *made, int *live) { LOCK(); *made = green_made; *live = green_live; UNLOCK(); }
long fake_last_ctx_tid(void) { return last_ctx_tid; }
int fake_calls_without_context(void) { return calls_without_ctx; }
int fake_primary_refs(int dev) { return valid_dev(dev) ? ctxs[dev].refs : -1; }
int fake_peer_enabled(int dev, int peer) { return ctxs[dev].peer_enabled[peer]; }

/* fake_last_launch copies the 11 arguments of the last cuLaunchKernel and
 * the values its parameters pointed to; it returns the parameter count, or
 * -1 before any launch, and the device whose context was current. */
int fake_last_launch(unsigned long long args[11], unsigned long long *params, int max, int *dev)
{
	LOCK();
	memcpy(args, launch_args, sizeof launch_args);
	for (int i = 0; i < launch_nparams && i < max; i++)
		params[i] = launch_params[i];
	*dev = launch_dev;
	int n = launch_nparams;
	UNLOCK();
	return n;
}

/* fake_last_ipc copies the 64 handle bytes and the flags the last
 * cuIpcOpenMemHandle_v2 received. */
unsigned fake_last_ipc(unsigned char out[64])
{
	LOCK();
	memcpy(out, ipc_seen, 64);
	unsigned f = ipc_flags_seen;
	UNLOCK();
	return f;
}

unsigned long fake_last_module_len(void) { return module_len_seen; }
int fake_last_func_attr(int *value) { *value = func_value_seen; return func_attr_seen; }
unsigned fake_last_hostalloc_flags(void) { return hostalloc_flags_seen; }
unsigned fake_last_hostregister_flags(void) { return hostregister_flags_seen; }
int fake_host_registered(void) { return hostregistered; }
unsigned fake_stream_flags(CUstream s) { return s ? s->flags : ~0u; }
unsigned fake_event_flags(CUevent e) { return e ? e->flags : ~0u; }
void fake_advance_clock_ms(double ms) { clock_offset_ms += ms; }

/* fake_vmm_live counts the VMM handles not yet released, the reserved
 * ranges and the mappings of this process. */
void fake_vmm_live(int *handles, int *ranges, int *maps)
{
	LOCK();
	*handles = *ranges = *maps = 0;
	for (struct vmm_handle *h = vmm_handles; h; h = h->next)
		*handles += !h->released;
	for (struct vmm_range *r = vmm_ranges; r; r = r->next)
		(*ranges)++;
	for (struct vmm_map *m = vmm_maps; m; m = m->next)
		(*maps)++;
	UNLOCK();
}

/* fake_last_prop copies what the last CUmemAllocationProp held: type,
 * requested handle types, location type and id, and whether any byte of
 * its tail (win32HandleMetaData, allocFlags) was not zero. */
void fake_last_prop(int out[5])
{
	LOCK();
	memcpy(out, last_prop, sizeof last_prop);
	UNLOCK();
}

/* fake_last_access copies the first four CUmemAccessDesc of the last
 * cuMemSetAccess (location type, id, flags each) and returns its count. */
int fake_last_access(int out[12])
{
	LOCK();
	memcpy(out, last_access, sizeof last_access);
	int n = last_access_count;
	UNLOCK();
	return n;
}
