package history_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// The event lines of docs/logs.md, written by real nodes, plus a view line
// of the same run, each with the record it must become.
func TestParseNodeLogMapsEveryEventOfARealRun(t *testing.T) {
	cases := []struct {
		name string
		line string
		want history.Record
	}{
		{
			name: "boot",
			line: `{"algorithm":"bully","answer":"200ms","boot":"7e5eb5cb58139c52","cluster":"ringleader","durable":{"epoch":0,"voted_epoch":0,"voted_for":0},"embedded_nats":true,"event":"boot","heartbeat":"100ms","level":"info","msg":"node starting","node":1,"peers":"1=127.0.0.1:16221,2=127.0.0.1:16222","quorum":"none","schema":1,"seed":1795674350265738977,"seq":1,"suspicion":"500ms","time":"2026-11-23T00:14:35.289668581Z"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:35.289668581Z"), Process: "node", Kind: history.KindBoot,
				Node: 1, Boot: "7e5eb5cb58139c52", Seq: 1},
		},
		{
			name: "send",
			line: `{"boot":"7e5eb5cb58139c52","epoch":0,"event":"send","from":1,"level":"info","message":{"type":"ELECTION","from":1,"to":2,"epoch":0,"candidate":1,"seq":1},"msg":"send","node":1,"seq":2,"time":"2026-11-23T00:14:35.419699826Z","to":2,"type":"ELECTION"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:35.419699826Z"), Process: "node", Kind: history.KindSend,
				Node: 1, Boot: "7e5eb5cb58139c52", Seq: 2,
				Msg: &election.Message{Type: "ELECTION", From: 1, To: 2, Epoch: 0, Candidate: 1, Seq: 1}},
		},
		{
			name: "view",
			line: `{"boot":"7e5eb5cb58139c52","epoch":0,"event":"view","leader":0,"level":"info","msg":"view changed","node":1,"role":"candidate","seq":3,"time":"2026-11-23T00:14:35.419749696Z"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:35.419749696Z"), Process: "node", Kind: history.KindView,
				Node: 1, Boot: "7e5eb5cb58139c52", Seq: 3,
				View: &election.View{Leader: 0, Epoch: 0, Role: election.Candidate}},
		},
		{
			name: "recv",
			line: `{"boot":"7e5eb5cb58139c52","epoch":1,"event":"recv","from":2,"level":"info","message":{"type":"COORDINATOR","from":2,"to":1,"epoch":1},"msg":"recv","node":1,"seq":4,"time":"2026-11-23T00:14:35.420552595Z","to":1,"type":"COORDINATOR"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:35.420552595Z"), Process: "node", Kind: history.KindRecv,
				Node: 1, Boot: "7e5eb5cb58139c52", Seq: 4,
				Msg: &election.Message{Type: "COORDINATOR", From: 2, To: 1, Epoch: 1}},
		},
		{
			name: "view-follower",
			line: `{"boot":"7e5eb5cb58139c52","epoch":1,"event":"view","leader":2,"level":"info","msg":"view changed","node":1,"role":"follower","seq":5,"time":"2026-11-23T00:14:35.420601000Z"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:35.420601Z"), Process: "node", Kind: history.KindView,
				Node: 1, Boot: "7e5eb5cb58139c52", Seq: 5,
				View: &election.View{Leader: 2, Epoch: 1, Role: election.Follower}},
		},
		{
			name: "drop",
			line: `{"boot":"7e5eb5cb58139c52","bytes":65,"detail":"wire: foreign-cluster: cluster \"elsewhere\", want \"ringleader\"","event":"drop","level":"info","msg":"message dropped","node":1,"reason":"foreign-cluster","seq":14,"time":"2026-11-23T00:14:36.151937424Z"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:36.151937424Z"), Process: "node", Kind: history.KindDrop,
				Node: 1, Boot: "7e5eb5cb58139c52", Seq: 14, Reason: "foreign-cluster"},
		},
		{
			name: "stop",
			line: `{"boot":"a511a3bea21088a3","epoch":1,"event":"stop","leader":2,"level":"info","msg":"node stopping","node":2,"role":"leader","seq":13,"time":"2026-11-23T00:14:36.157201806Z"}`,
			want: history.Record{Time: mustTime(t, "2026-11-23T00:14:36.157201806Z"), Process: "node", Kind: history.KindStop,
				Node: 2, Boot: "a511a3bea21088a3", Seq: 13},
		},
	}
	seen := map[history.Kind]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := history.ParseNodeLog([]byte(c.line))
			if err != nil || !ok {
				t.Fatalf("ParseNodeLog = ok %v, err %v; want a record", ok, err)
			}
			sameRecords(t, []history.Record{got}, []history.Record{c.want})
			seen[got.Kind] = true
		})
	}
	for _, k := range []history.Kind{history.KindBoot, history.KindView, history.KindSend, history.KindRecv, history.KindDrop, history.KindStop} {
		if !seen[k] {
			t.Errorf("no case produced a %s record", k)
		}
	}
}

// TestParseNodeLogReadsWhatLogrusWrites writes event lines the way node.event
// does (logrus's JSON formatter, the history.Log* keys, typed values) and
// parses them back: the schema's two ends agree.
func TestParseNodeLogReadsWhatLogrusWrites(t *testing.T) {
	var buf bytes.Buffer
	log := logrus.New()
	log.Out = &buf
	log.Formatter = &logrus.JSONFormatter{TimestampFormat: time.RFC3339Nano}
	const boot = "0123456789abcdef"
	node := election.NodeID(3)
	var seq uint64
	event := func(ev string, f logrus.Fields, msg string) {
		seq++
		f[history.LogNode] = node
		f[history.LogBoot] = boot
		f[history.LogSeq] = seq
		f[history.LogEvent] = ev
		log.WithFields(f).Info(msg)
	}
	msg := election.Message{Type: "ELECTION", From: 3, To: 1, Epoch: 7, Candidate: 3, Members: []election.NodeID{3, 1}, Phase: 2, Hop: 1, Dir: election.Clockwise, Seq: 9, Reply: true}
	msgFields := func(m election.Message) logrus.Fields {
		return logrus.Fields{history.LogType: m.Type, history.LogFrom: m.From, history.LogTo: m.To, history.LogEpoch: m.Epoch, history.LogMessage: m}
	}
	view := election.View{Leader: 3, Epoch: 7, Role: election.Leader}

	event(history.EventBoot, logrus.Fields{history.LogSchema: history.LogSchemaVersion, "algorithm": "bully", "durable": map[string]int{"epoch": 6}}, "node starting")
	log.WithFields(logrus.Fields{history.LogNode: node, history.LogBoot: boot, "peer": 2, "source": "route"}).Info("peer-down hint")
	event(history.EventSend, msgFields(msg), "")
	event(history.EventRecv, msgFields(msg), "")
	event(history.EventView, logrus.Fields{history.LogLeader: view.Leader, history.LogEpoch: view.Epoch, history.LogRole: view.Role}, "view changed")
	event(history.EventDrop, logrus.Fields{history.LogReason: "malformed", "detail": "wire: malformed", "bytes": 3}, "message dropped")
	event(history.EventStop, logrus.Fields{history.LogLeader: view.Leader, history.LogEpoch: view.Epoch, history.LogRole: view.Role}, "node stopping")

	var recs []history.Record
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		rec, ok, err := history.ParseNodeLog([]byte(line))
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ok {
			recs = append(recs, rec)
		}
	}
	wantKinds := []history.Kind{history.KindBoot, history.KindSend, history.KindRecv, history.KindView, history.KindDrop, history.KindStop}
	if len(recs) != len(wantKinds) {
		t.Fatalf("%d records from %d event lines (the informational line must be skipped): %+v", len(recs), len(wantKinds), recs)
	}
	for i, r := range recs {
		if r.Kind != wantKinds[i] || r.Process != "node" || r.Node != node || r.Boot != boot || r.Seq != uint64(i+1) {
			t.Errorf("record %d = %+v; want kind %s, node %d, boot %s, seq %d", i, r, wantKinds[i], node, boot, i+1)
		}
		if r.Time.IsZero() {
			t.Errorf("record %d has no time", i)
		}
	}
	for _, r := range recs[1:3] {
		if r.Msg == nil || !reflect.DeepEqual(*r.Msg, msg) {
			t.Errorf("%s record message %+v, want %+v", r.Kind, r.Msg, msg)
		}
	}
	if v := recs[3].View; v == nil || *v != view {
		t.Errorf("view record view %v, want %v", v, view)
	}
	if recs[4].Reason != "malformed" {
		t.Errorf("drop record reason %q, want malformed", recs[4].Reason)
	}
}

func TestParseNodeLogSkipsLinesWithoutAnEvent(t *testing.T) {
	for _, line := range []string{
		`{"boot":"7e5eb5cb58139c52","level":"info","msg":"peer-down hint","node":1,"peer":2,"source":"route","time":"2026-11-23T00:14:36.1Z"}`,
		`{"boot":"7e5eb5cb58139c52","level":"warning","msg":"starting before every peer is reachable","node":1,"reachable":{"2":false},"time":"2026-11-23T00:14:36.1Z"}`,
		`{"boot":"7e5eb5cb58139c52","error":"nats: timeout","level":"error","msg":"durable state not saved","node":1,"time":"2026-11-23T00:14:36.1Z"}`,
		`{"level":"debug","msg":"Server is ready","nats":true,"time":"2026-11-23T00:14:36.1Z"}`,
		`{}`,
	} {
		rec, ok, err := history.ParseNodeLog([]byte(line))
		if ok || err != nil {
			t.Errorf("%s: ok %v, err %v, record %+v; want ok=false and no error", line, ok, err, rec)
		}
	}
}

func TestParseNodeLogRejectsLinesThatAreNotJSONObjects(t *testing.T) {
	for _, line := range []string{
		``,
		`node starting`,
		`time="2026-11-23T00:14:35Z" level=info msg="node starting" event=boot`, // logrus's text formatter
		`{"event":"boot","node":1,"boot":"b","seq":1`,                           // torn
		`[1,2,3]`,
		`42`,
		`{"event":"view","node":"one","boot":"b","seq":1}`, // node must be a number
		`{"event":"view","node":1,"boot":"b","seq":1,"time":"yesterday"}`,
	} {
		_, ok, err := history.ParseNodeLog([]byte(line))
		if err == nil {
			t.Errorf("%q: ok %v and no error; want an error", line, ok)
		} else if ok {
			t.Errorf("%q: ok=true along with error %v", line, err)
		}
	}
}

func TestParseNodeLogRejectsAnEventWithoutNodeBootOrSeq(t *testing.T) {
	full := map[string]interface{}{
		"time": "2026-11-23T00:14:35.419749696Z", "level": "info", "msg": "view changed",
		"event": "view", "node": 1, "boot": "7e5eb5cb58139c52", "seq": 3, "leader": 1, "epoch": 0, "role": "leader",
	}
	for _, ev := range []string{history.EventBoot, history.EventView, history.EventDrop, history.EventStop} {
		for _, missing := range []string{history.LogNode, history.LogBoot, history.LogSeq} {
			m := map[string]interface{}{}
			for k, v := range full {
				if k != missing {
					m[k] = v
				}
			}
			m["event"] = ev
			line, _ := json.Marshal(m)
			_, ok, err := history.ParseNodeLog(line)
			if err == nil || ok {
				t.Errorf("%s event without %s: ok %v, err %v; want an error", ev, missing, ok, err)
				continue
			}
			if !strings.Contains(err.Error(), ev) {
				t.Errorf("%s event without %s: error %q does not name the event", ev, missing, err)
			}
		}
	}
	// Zero values are as good as missing: node 0 is no node, seq starts at 1.
	for _, bad := range []string{
		`{"event":"view","node":0,"boot":"b","seq":3}`,
		`{"event":"view","node":1,"boot":"","seq":3}`,
		`{"event":"view","node":1,"boot":"b","seq":0}`,
		`{"event":"view","node":-2,"boot":"b","seq":3}`,
	} {
		if _, ok, err := history.ParseNodeLog([]byte(bad)); err == nil || ok {
			t.Errorf("%s: ok %v, err %v; want an error", bad, ok, err)
		}
	}
}

func TestParseNodeLogRejectsSendAndRecvWithoutMessage(t *testing.T) {
	for _, ev := range []string{history.EventSend, history.EventRecv} {
		for _, line := range []string{
			`{"boot":"b","epoch":0,"event":"` + ev + `","from":1,"level":"info","msg":"` + ev + `","node":1,"seq":2,"time":"2026-11-23T00:14:35Z","to":2,"type":"ELECTION"}`,
			`{"boot":"b","event":"` + ev + `","message":null,"node":1,"seq":2,"time":"2026-11-23T00:14:35Z"}`,
		} {
			_, ok, err := history.ParseNodeLog([]byte(line))
			if err == nil || ok {
				t.Errorf("%s: ok %v, err %v; want an error", line, ok, err)
				continue
			}
			if !strings.Contains(err.Error(), ev) || !strings.Contains(err.Error(), `"message"`) {
				t.Errorf("%s: error %q should name the event and the missing \"message\" key", line, err)
			}
		}
	}
}

func TestParseNodeLogSkipsAnEventFromANewerSchema(t *testing.T) {
	line := `{"boot":"7e5eb5cb58139c52","event":"lease","expires":"2026-11-23T00:14:36Z","level":"info","msg":"lease renewed","node":1,"seq":7,"time":"2026-11-23T00:14:35Z"}`
	rec, ok, err := history.ParseNodeLog([]byte(line))
	if ok || err != nil {
		t.Fatalf("unknown event: ok %v, err %v, record %+v; want ok=false and no error", ok, err, rec)
	}
}

// TestParseProgramBootReadsWhatTheNodesProbeFound: the boot line of a node
// hosting a program carries the program and what its probe start answered;
// any other line is not one.
func TestParseProgramBootReadsWhatTheNodesProbeFound(t *testing.T) {
	line := `{"algorithm":"program-bully-go","announce_types":["COORDINATOR"],"answer":"200ms","boot":"5d2c0f3b9a1e7c44","claims":["agreement","bully-max","liveness"],"cluster":"compose","durable":{"epoch":0,"voted_epoch":0,"voted_for":0},"election_types":["ELECTION","OK","COORDINATOR"],"embedded_nats":true,"event":"boot","heartbeat":"100ms","level":"info","msg":"node starting","node":4,"options":"","peers":"1=node1:6222,2=node2:6222","program":"/program/bully-go","quorum":"none","schema":1,"seed":7,"seq":1,"suspicion":"500ms","time":"2026-11-26T10:00:00.5Z"}`
	pb, ok := history.ParseProgramBoot([]byte(line))
	want := history.ProgramBoot{Node: 4, Boot: "5d2c0f3b9a1e7c44", Algorithm: "program-bully-go", Quorum: "none", Program: "/program/bully-go",
		Claims: []election.Property{election.Agreement, election.HighestWins, election.Liveness}, ElectionTypes: []string{"ELECTION", "OK", "COORDINATOR"}, AnnounceTypes: []string{"COORDINATOR"}}
	if !ok || !reflect.DeepEqual(pb, want) {
		t.Fatalf("got %+v (ok %v), want %+v", pb, ok, want)
	}
	for _, other := range []string{
		`{"algorithm":"bully","boot":"7e5eb5cb58139c52","event":"boot","node":1,"quorum":"none","seq":1}`, // a built-in algorithm's boot
		`{"boot":"7e5eb5cb58139c52","event":"view","node":1,"program":"/program/x","seq":2,"leader":1}`,   // not a boot
		`{"boot":"","event":"boot","node":1,"program":"/program/x","seq":1}`,                              // no boot ID
		`not json`,
	} {
		if pb, ok := history.ParseProgramBoot([]byte(other)); ok {
			t.Errorf("%s read as a program's boot: %+v", other, pb)
		}
	}
}
