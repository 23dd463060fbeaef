package bench

// IPCChildInfo is what the IPC tests learn of one child after the handshake.
type IPCChildInfo = ipcChildInfo

// SetIPCAfterMap makes RunIPC call fn once the children have mapped each
// other, with their pids and every handle they exported.
func SetIPCAfterMap(o *IPCOptions, fn func([]IPCChildInfo)) { o.afterMap = fn }

// SetIPCTrace makes RunIPC call fn for every request a child answers.
func SetIPCTrace(o *IPCOptions, fn func(rank int, op string)) { o.trace = fn }
