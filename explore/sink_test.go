package explore

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/ringleader-dev/ringleader/history"
)

// fullDisk is a history sink on a disk with no space left: every write
// fails as /dev/full's do.
type fullDisk struct{}

func (fullDisk) Append(history.Record) error { return syscall.ENOSPC }

// A history that cannot be written is an error naming the cause, never a
// panic: the schedule is not played on a history that is lost.
func TestOneReportsAHistoryThatCannotBeWritten(t *testing.T) {
	_, err := One(Options{Algorithm: "bully", N: 3}, 1, fullDisk{})
	if err == nil {
		t.Fatal("One with a full disk for its history returned no error")
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "seed 1") {
		t.Errorf("error %q: want it to name the seed and wrap ENOSPC", err)
	}
}
