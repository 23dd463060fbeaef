package compare

// ReadShared is readShared, for the tests of package compare_test.
var ReadShared = readShared
