package ipc

// ChildInfo is what the IPC tests learn of one child after the handshake.
type ChildInfo = childInfo

// SetAfterMap makes Run call fn once the children have mapped each other,
// with their pids and every handle they exported.
func SetAfterMap(o *Options, fn func([]ChildInfo)) { o.afterMap = fn }

// SetTrace makes Run call fn for every request a child answers.
func SetTrace(o *Options, fn func(rank int, op string)) { o.trace = fn }
