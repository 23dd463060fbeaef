package results

// ReadBounded is readBounded, for tests of its bound below MaxFileBytes.
var ReadBounded = readBounded
