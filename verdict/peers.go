package verdict

// HealthCheck reports whether the check of that name judges the machine's
// health (its links and memory) rather than its figures or the run: a
// node whose health failed is not held to its peers by package fleet, nor
// are its figures a reference for theirs.
func HealthCheck(name string) bool { return name == "links" || name == "memory" }
