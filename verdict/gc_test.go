package verdict

// The test binary's garbage collector settings: internal/testgc says why.
import _ "github.com/p2pbench/p2pbench/internal/testgc"
