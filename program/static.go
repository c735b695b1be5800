package program

import (
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
)

// CheckStatic reports whether the command argv[0] names can run alone in
// an empty (FROM scratch) image: a Linux executable that needs no dynamic
// loader and no shared library. A script or an interpreter's program is
// not one: it needs the image that holds its runtime.
func CheckStatic(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return "", fmt.Errorf("%s: %w", argv[0], err)
	}
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is not a static executable (not an ELF file: %v); alone in the FROM-scratch node image a program must be one, such as a Go program built with CGO_ENABLED=0", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is not a static executable: it needs a dynamic loader, which the node image does not have (build it statically, for Go with CGO_ENABLED=0)", path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return "", fmt.Errorf("%s is not a static executable: it needs %v", path, libs)
	}
	return path, nil
}
