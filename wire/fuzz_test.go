package wire

import "testing"

// FuzzDecode states what Decode promises for any input: it never panics;
// when it accepts, the message is valid for the membership, and encoding it
// again and decoding that gives the same message back.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"cluster":"c1","msg":{"type":"ELECTION","from":1,"to":5,"epoch":1}}`))
	f.Add([]byte(`{"v":1,"cluster":"c1","msg":{"type":"RING","from":2,"to":3,"members":[1,2],"dir":-1,"phase":2,"hop":1,"seq":4,"reply":true,"candidate":5}}`))
	f.Add([]byte(`{"v":1,"cluster":"c1","msg":{"type":"MsgVote","from":3,"to":1,"epoch":2,"payload":"CAUQAxgC"}}`))
	f.Add([]byte(`{"v":1,"cluster":"c1","msg":{"type":"MsgApp","from":3,"to":1,"payload":"===="}}`))
	f.Add([]byte(`{"v":2,"cluster":"c1","msg":{}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, "c1", members)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Decode error %v is not a *wire.Error", err)
			}
			return
		}
		if err := Validate(m, members); err != nil {
			t.Fatalf("Decode accepted an invalid message %+v: %v", m, err)
		}
		b, err := Encode("c1", m)
		if err != nil {
			// Encode always writes epoch, type, from and to; an input
			// within a few bytes of MaxSize that omitted them can grow
			// past it. Anything else is a bug.
			if ReasonOf(err) == Oversize && len(data) > MaxSize-64 {
				return
			}
			t.Fatalf("Encode of an accepted message %+v: %v", m, err)
		}
		again, err := Decode(b, "c1", members)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		if !equal(m, again) {
			t.Fatalf("round trip changed %+v into %+v", m, again)
		}
	})
}
