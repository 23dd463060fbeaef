package kernels

// CUatomicOperation values (cuda.AtomicOperation) of the operations below,
// repeated here so that kernels does not import cuda.
const (
	driverAtomicIntegerAdd int32 = 0
	driverAtomicIntegerMin int32 = 1
	driverAtomicExchange   int32 = 8
	driverAtomicCAS        int32 = 9
	driverAtomicFloatAdd   int32 = 10
)

// atomicKernels names the entry points of one operation in module "atomic";
// chain is false for red operations, which return nothing to chain on.
func atomicKernels(name string, chain bool) (tput, lat Kernel) {
	tput = Kernel{Module: "atomic", Entry: "p2p_atomic_" + name, MinCC: 80}
	if chain {
		lat = Kernel{Module: "atomic", Entry: "p2p_atomic_chain_" + name, MinCC: 80}
	}
	return tput, lat
}

func atomicOp(name, ptxOp string, width int, float bool, init uint64, chain bool, driverOp int32) AtomicOp {
	tput, lat := atomicKernels(name, chain)
	return AtomicOp{
		Name: name, PTXOp: ptxOp, Width: width, Float: float, Init: init,
		Tput: tput, Chain: lat, DriverOp: driverOp,
	}
}

// AtomicOps lists every remote atomic operation p2pbench measures. atomic.ptx
// is generated from the same list in internal/ptxgen; the tests check that
// every entry named here exists there.
var AtomicOps = []AtomicOp{
	atomicOp("add_u32", "atom.sys.global.add.u32", 4, false, 0, true, driverAtomicIntegerAdd),
	atomicOp("red_add_u32", "red.sys.global.add.u32", 4, false, 0, false, driverAtomicIntegerAdd),
	atomicOp("add_u64", "atom.sys.global.add.u64", 8, false, 0, true, driverAtomicIntegerAdd),
	atomicOp("red_add_u64", "red.sys.global.add.u64", 8, false, 0, false, driverAtomicIntegerAdd),
	atomicOp("cas_u64", "atom.sys.global.cas.b64", 8, false, 0, true, driverAtomicCAS),
	atomicOp("exch_u32", "atom.sys.global.exch.b32", 4, false, 0, true, driverAtomicExchange),
	atomicOp("min_u32", "atom.sys.global.min.u32", 4, false, 0xFFFFFFFF, true, driverAtomicIntegerMin),
	atomicOp("add_f32", "atom.sys.global.add.f32", 4, true, 0, true, driverAtomicFloatAdd),
}

// AtomicOpByName finds an operation by its name ("add_u32", ...).
func AtomicOpByName(name string) (AtomicOp, bool) {
	for _, o := range AtomicOps {
		if o.Name == name {
			return o, true
		}
	}
	return AtomicOp{}, false
}
