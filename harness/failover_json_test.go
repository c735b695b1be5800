package harness

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/check"
)

// results.json says a failover did not recover with "recovered": false and
// null lengths; one that did keeps every figure, and both read back.
func TestFailoverResultJSONSaysNotRecoveredAndReadsBack(t *testing.T) {
	at := time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC)
	recovered := FailoverResult{Failover: check.Failover{Op: "kill", Leader: 5, Invoked: at, From: at, Recovered: true,
		At: at.Add(700 * time.Millisecond), Duration: 700 * time.Millisecond, Millis: 700}, Suspicions: 1.4, FromInvokeMillis: 700}
	lost := FailoverResult{Failover: check.Failover{Op: "kill", Leader: 4, Invoked: at, From: at, Note: "no new leader agreed before the history ended first"}}
	b, err := json.Marshal([]FailoverResult{recovered, lost})
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"at", "ms", "duration", "x_suspicion", "ms_from_invoke"} {
		if v, ok := raw[1][k]; !ok || v != nil {
			t.Errorf("unrecovered %s = %v (present %v), want null", k, v, ok)
		}
		if raw[0][k] == nil {
			t.Errorf("recovered %s is missing", k)
		}
	}
	if raw[1]["recovered"] != false || raw[0]["x_suspicion"] != 1.4 {
		t.Errorf("JSON %s", b)
	}
	var back []FailoverResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back[0].Suspicions != 1.4 || back[0].Millis != 700 || !back[0].At.Equal(recovered.At) || back[1].Recovered || back[1].Leader != 4 {
		t.Errorf("read back %+v", back)
	}
}

func TestTableSaysNotRecovered(t *testing.T) {
	r := &Result{Scenario: "s", Rep: 1, Reps: 1, Failovers: []FailoverResult{{Failover: check.Failover{Op: "kill", Leader: 5}}}}
	var buf bytes.Buffer
	Table(&buf, []*Result{r})
	if !strings.Contains(buf.String(), "not recovered") || strings.Contains(buf.String(), "none") {
		t.Errorf("table:\n%s", buf.String())
	}
}
