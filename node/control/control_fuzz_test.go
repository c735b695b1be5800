package control

import (
	"reflect"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/wire"
)

// FuzzDecode states what Decode promises for any input: it
// never panics, every refusal is a *wire.Error, and an accepted request
// encodes again to one that decodes to the same change.
func FuzzDecode(f *testing.F) {
	members := []election.NodeID{1, 2, 3}
	f.Add([]byte(`{"v":1,"clock":{"rate":0.5}}`))
	f.Add([]byte(`{"v":1,"clock":{"jump_ms":-250},"drop_from":[2,3]}`))
	f.Add([]byte(`{"v":1,"drop_from":[]}`))
	f.Add([]byte(`{"v":1,"clock":{"rate":1e308}}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data, 1, members)
		if err != nil {
			if _, ok := err.(*wire.Error); !ok {
				t.Fatalf("Decode error %v is not a *wire.Error", err)
			}
			return
		}
		b, err := Encode(c)
		if err != nil {
			t.Fatalf("Encode of an accepted %s: %v", c, err)
		}
		again, err := Decode(b, 1, members)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("round trip changed %s into %s", c, again)
		}
	})
}
