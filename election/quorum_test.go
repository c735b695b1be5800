package election

import "testing"

func TestQuorumModeReadsAndWritesAsPeopleWriteIt(t *testing.T) {
	for in, want := range map[string]QuorumMode{"": NoQuorum, "none": NoQuorum, "majority": Majority} {
		got, err := ParseQuorum(in)
		if err != nil || got != want {
			t.Errorf("ParseQuorum(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseQuorum("most"); err == nil {
		t.Error(`ParseQuorum("most") accepted`)
	}
	if NoQuorum.String() != "none" || Majority.String() != "majority" {
		t.Errorf("String: %q, %q", NoQuorum.String(), Majority.String())
	}
	with, without := Algorithm{Name: "q", Quorum: true}, Algorithm{Name: "p"}
	if with.CheckQuorum(Majority) != nil || without.CheckQuorum(NoQuorum) != nil {
		t.Error("a supported mode was refused")
	}
	if err := without.CheckQuorum(Majority); err == nil {
		t.Error("an algorithm without a quorum mode accepted majority")
	}
}
