//go:build !unix

package results

import "os"

// mapFile maps nothing where there is no mmap: files are read.
func mapFile(*os.File, int64) mapped { return nil }

func unmap(mapped) {}
