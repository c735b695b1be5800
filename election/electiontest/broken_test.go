package electiontest_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/electiontest"
)

// minID is maxID turned upside down: every node floods the LOWEST ID it has
// seen and the lowest live node leads. It agrees and is live, but its
// registration below claims bully-max (highest ID wins), which is a lie the
// suite must catch.
type minID struct {
	cfg  election.Config
	best election.NodeID
	view election.View
}

func newMinID(cfg election.Config) (election.Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &minID{cfg: cfg}, nil
}

func (m *minID) View() election.View { return m.view }

func (m *minID) setView(out []election.Effect) []election.Effect {
	role := election.Follower
	if m.best == m.cfg.ID {
		role = election.Leader
	}
	v := election.View{Leader: m.best, Epoch: m.cfg.Durable.Epoch, Role: role}
	if v == m.view {
		return out
	}
	m.view = v
	return append(out, election.Effect{Kind: election.EffectView, View: v})
}

func (m *minID) Step(ev election.Event) []election.Effect {
	var out []election.Effect
	t := m.cfg.Timing
	switch ev.Kind {
	case election.EventStart:
		m.cfg.Durable.Epoch++
		out = append(out, election.Effect{Kind: election.EffectPersist, Durable: m.cfg.Durable})
		m.best = m.cfg.ID
		out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "ELECTION", Candidate: m.cfg.ID}})
		out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "heartbeat", After: t.Heartbeat})
		out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "suspect", After: t.Suspicion})
		out = m.setView(out)
	case election.EventReceive:
		switch ev.Msg.Type {
		case "ELECTION":
			if ev.Msg.Candidate < m.best {
				m.best = ev.Msg.Candidate
				out = m.setView(out)
			} else if ev.Msg.Candidate > m.best && m.best == m.cfg.ID {
				out = append(out, election.Effect{Kind: election.EffectSend, Msg: election.Message{Type: "ELECTION", To: ev.Msg.From, Candidate: m.cfg.ID}})
			}
		case "HEARTBEAT":
			if ev.Msg.From <= m.best {
				m.best = ev.Msg.From
				out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "suspect", After: t.Suspicion})
				out = m.setView(out)
			}
		}
	case election.EventTimer:
		switch ev.Timer {
		case "heartbeat":
			if m.best == m.cfg.ID {
				out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "HEARTBEAT"}})
			}
			out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "heartbeat", After: t.Heartbeat})
		case "suspect":
			if m.best != m.cfg.ID {
				m.best = m.cfg.ID
				out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "ELECTION", Candidate: m.cfg.ID}})
				out = m.setView(out)
			}
			out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "suspect", After: t.Suspicion})
		}
	}
	return out
}

const lowestWinsName = "test-lowest-wins-claims-bully-max"

func init() {
	election.Register(election.Algorithm{
		Name: lowestWinsName, Title: "min-ID flooding that claims bully-max (test only, deliberately broken)", Topology: "complete",
		New:           newMinID,
		ElectionTypes: []string{"ELECTION"},
		Claims: func(q election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
		},
	})
}

// brokenEnv selects, in a re-executed test binary, the run of the suite on
// the broken algorithm. The suite failing is the point, so it must not fail
// the parent's run: it happens in a child process whose failure the parent
// asserts.
const brokenEnv = "RINGLEADER_ELECTIONTEST_RUN_BROKEN"

func TestSuiteFailsAnAlgorithmThatElectsTheLowestIDButClaimsBullyMax(t *testing.T) {
	if os.Getenv(brokenEnv) == "1" {
		a, err := election.Lookup(lowestWinsName)
		if err != nil {
			t.Fatal(err)
		}
		electiontest.RunWith(t, a, electiontest.Options{Schedules: 20})
		return
	}

	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("the suite passed an algorithm that elects the lowest ID while claiming bully-max (err %v):\n%s", err, out.String())
	}
	text := out.String()
	// Each part of the suite that judges who wins catches the lie, and
	// says which property failed.
	for _, want := range []string{
		"--- FAIL: " + t.Name() + "/no-quorum/FaultFreeElectionAgrees",
		"claims bully-max",
		"--- FAIL: " + t.Name() + "/no-quorum/LeaderCrashIsReplaced",
		"want the highest live ID",
		"--- FAIL: " + t.Name() + "/no-quorum/RandomFaultSchedules",
		"bully-max: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the failing suite's output does not contain %q:\n%s", want, text)
		}
	}
	// The properties it does have are not blamed.
	for _, notWant := range []string{"agreement: ", "liveness: "} {
		if strings.Contains(text, notWant) {
			t.Errorf("the suite blamed a property the algorithm has (%q):\n%s", notWant, text)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("the suite rejected %s as it should", lowestWinsName)
}
