package program

import "syscall"

// syscallEPIPE is a write to a program that closed its stdin or exited.
var syscallEPIPE = syscall.EPIPE
