package program

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
)

// Hosted is a program as the nodes that host it describe it: what a node
// learnt from its own probe start and wrote on its boot line. A process
// that attaches to a running cluster of programs takes the program's
// claims and message classes from there, so it never starts the program
// itself (it may not even be able to: an interpreter that only the
// cluster's image holds).
type Hosted struct {
	// Command is the program's command line as the nodes run it.
	Command []string
	// Quorum is the mode the nodes run it in (resolved: none or majority).
	Quorum        election.QuorumMode
	Claims        []election.Property
	ElectionTypes []string
	AnnounceTypes []string
}

// Check says what of h a registry entry cannot hold: no command, a
// quorum mode that is not none or majority, an unknown property, an empty
// message type.
func (h Hosted) Check() error {
	if len(h.Command) == 0 || h.Command[0] == "" {
		return fmt.Errorf("no command")
	}
	if h.Quorum != election.NoQuorum && h.Quorum != election.Majority {
		return fmt.Errorf("quorum %q: want none or majority", h.Quorum.Text())
	}
	for i, c := range h.Claims {
		if !slices.Contains(knownProperties, c) {
			return fmt.Errorf("claims[%d]: %q is not a property (want one of %v)", i, c, knownProperties)
		}
	}
	for _, ts := range [][]string{h.ElectionTypes, h.AnnounceTypes} {
		if slices.Contains(ts, "") {
			return fmt.Errorf("an empty message type")
		}
	}
	return nil
}

var hosted = map[string]string{} // key(h) → registered name, under programsMu

func (h Hosted) key() string {
	parts := []string{key(h.Command, h.Quorum)}
	for _, l := range [][]string{propertyTexts(h.Claims), h.ElectionTypes, h.AnnounceTypes} {
		parts = append(parts, strings.Join(l, ","))
	}
	return strings.Join(parts, "\x01")
}

func propertyTexts(ps []election.Property) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// RegisterHosted makes a program that runs elsewhere an algorithm of the
// registry, from what its nodes said of it (h), and returns its name: the
// name its nodes gave it (program-NAME, numbered when this process has
// that name already). Everything that judges a run finds its claims and
// message classes there; nothing can start it here (its New says where it
// runs). Registering the same description again returns the same name.
func RegisterHosted(h Hosted) (string, error) {
	if err := h.Check(); err != nil {
		return "", fmt.Errorf("program %s, as its nodes describe it: %w", strings.Join(h.Command, " "), err)
	}
	programsMu.Lock()
	defer programsMu.Unlock()
	k := h.key()
	if name, ok := hosted[k]; ok {
		return name, nil
	}
	name := freeName(h.Command, h.Quorum)
	line := strings.Join(h.Command, " ")
	claims := slices.Clone(h.Claims)
	election.Register(election.Algorithm{
		Name:     name,
		Title:    "the program " + line + ", hosted by a running cluster's nodes (docs/protocol.md)",
		Topology: "complete",
		New: func(cfg election.Config) (election.Machine, error) {
			return nil, fmt.Errorf("program %s (%s) runs in the nodes of the cluster it was read from, not in this process", name, line)
		},
		ElectionTypes: slices.Clone(h.ElectionTypes),
		AnnounceTypes: slices.Clone(h.AnnounceTypes),
		Claims:        func(election.QuorumMode) []election.Property { return slices.Clone(claims) },
		Quorums:       []election.QuorumMode{h.Quorum},
		DefaultQuorum: h.Quorum,
		QuorumWhy:     "its nodes run it in this mode",
		External:      true,
	})
	hosted[k] = name
	return name, nil
}
