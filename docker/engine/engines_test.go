package engine

import (
	"strings"
	"testing"
)

func TestParseListResolvesAddressesAndContexts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	writeContext(t, dir, "zone-b", "tcp://10.1.2.3:2376")
	es, err := ParseList(" unix:///var/run/docker.sock , zone-b")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Host != "unix:///var/run/docker.sock" || es[1].Host != "tcp://10.1.2.3:2376" || es[1].Source != `context "zone-b"` {
		t.Fatalf("got %+v", es)
	}
}

func TestParseListNamesItsMistakes(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	writeContext(t, dir, "here", "unix:///var/run/docker.sock")
	for _, tc := range []struct{ list, want string }{
		{"unix:///a.sock,,unix:///b.sock", "entry 2 is empty"},
		{"unix:///var/run/docker.sock,here", `"unix:///var/run/docker.sock" and "here" are the same engine`},
		{"unix:///a.sock,nowhere", `context "nowhere"`},
	} {
		_, err := ParseList(tc.list)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseList(%q) = %v, want an error containing %q", tc.list, err, tc.want)
		}
	}
}

func TestConnectListFailsOnAnEngineThatDoesNotAnswer(t *testing.T) {
	t.Setenv(EnginesEnv, "unix:///nonexistent/docker.sock")
	_, err := ConnectList(t.Context(), "")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/docker.sock") {
		t.Fatalf("ConnectList = %v, want the silent engine named", err)
	}
	t.Setenv(EnginesEnv, "")
	if es, err := ConnectList(t.Context(), ""); es != nil || err != nil {
		t.Fatalf("no list: %v, %v; want nothing", es, err)
	}
}
