package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

var five = []election.NodeID{1, 2, 3, 4, 5}

// TestWordsMeanWhatTheScenarioMeans: each command-line spelling parses to
// the same step as its scenario spelling.
func TestWordsMeanWhatTheScenarioMeans(t *testing.T) {
	for words, yaml := range map[string]string{
		"kill leader":               "kill: leader",
		"stop 1,2":                  "stop: [1, 2]",
		"pause 5":                   "pause: 5",
		"restart down":              "restart: down",
		"resume paused":             "resume: paused",
		"partition 1,2,3 4,5":       "partition: {groups: [[1,2,3],[4,5]]}",
		"partition halves":          "partition: {shape: halves}",
		"partition majorities-ring": "partition: {shape: majorities-ring}",
		"partition engines":         "partition: {shape: engines}",
		"partition bridge":          "partition: {shape: bridge}",
		"partition bridge leader":   "partition: {shape: bridge, target: leader}",
		"isolate leader":            "partition: {shape: isolate, target: leader}",
		"isolate 5":                 "partition: {shape: isolate, target: 5}",
		"cut 1 5":                   "partition: {cut: [1, 5]}",
		"cut 1 5 --one-way":         "partition: {one-way: [1, 5]}",
		"loss 10":                   "loss: {percent: 10, target: all}",
		"loss 25% leader":           "loss: {percent: 25, target: leader}",
		"delay 100ms 1,2":           "delay: {ms: 100, target: [1, 2]}",
		"delay 50 --jitter 10ms":    "delay: {ms: 50, target: all, jitter_ms: 10}",
		"delay 0":                   "delay: {ms: 0, target: all}",
		"heal":                      "heal",
	} {
		got, err := ParseWords(strings.Fields(words), five)
		if err != nil {
			t.Errorf("%q: %v", words, err)
			continue
		}
		want, err := ParseStep("scenario", yaml, five)
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		if got.Fault.String() != want.Fault.String() || got.Fault.TargetText() != want.Fault.TargetText() {
			t.Errorf("%q = %s, want %s (as %q)", words, got.Fault, want.Fault, yaml)
		}
	}
	st, _ := ParseWords(strings.Fields("delay 50 --jitter 10ms"), five)
	if st.Fault.Op != chaos.Delay || chaos.DelayMS.Dur(st.Fault.Params) != 50*time.Millisecond || chaos.DelayJitter.Dur(st.Fault.Params) != 10*time.Millisecond {
		t.Errorf("delay 50 --jitter 10ms = %+v", st.Fault)
	}
}

// TestBadWordsSayWhatIsWrong: every mistake is named, before anything runs.
func TestBadWordsSayWhatIsWrong(t *testing.T) {
	for words, want := range map[string]string{
		"":                        "no fault given",
		"explode 5":               "unknown fault",
		"kill":                    "takes one TARGET",
		"kill 9":                  "not in the cluster",
		"kill paused":             "unknown target",
		"restart leader":          "unknown target",
		"partition 1,2,3":         "at least two groups",
		"partition odd":           "not a group of node IDs",
		"cut 1":                   "two node IDs",
		"cut 1 5 --sideways":      "unknown flag",
		"loss lots":               "not a percentage",
		"loss 0.5":                "[1, 100]",
		"delay soon":              "not a duration",
		"heal now":                "takes nothing",
		"kill leader;rm":          "neither a target name nor node IDs",
		"isolate {shape: halves}": "neither a target name nor node IDs",
	} {
		_, err := ParseWords(strings.Fields(words), five)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want it to say %q", words, err, want)
		}
	}
}
