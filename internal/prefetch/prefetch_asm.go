//go:build amd64 || arm64

package prefetch

import "unsafe"

// line is written in assembly for this architecture.
//
//go:noescape
func line(p unsafe.Pointer)
