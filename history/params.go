package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"time"
)

// Params are the values a fault carries beyond its targets (a loss's
// fraction, a delay and its jitter, a clock's rate), keyed by the names
// its kind declares (chaos.Param.Name). They travel as this one value from
// the scenario parser through Decide, the world model and the backends to
// the history record and back, so that no struct grows a field for a new
// fault kind.
//
// A value is a number or a duration; a zero value is not held (zero means
// "not given" for every parameter), so two Params with the same values
// are equal whatever wrote them. Params are immutable: With returns a new
// value and shares nothing it could change.
//
// In JSON they are an object, keys in the order they were set: numbers as
// numbers, durations as strings people read ("20ms") — the format history
// files have always had for the params of loss, delay and clock.
type Params struct {
	vals []Value
}

// Value is one parameter's value.
type Value struct {
	Key string
	// Num is a number's value; Dur a duration's (IsDur).
	Num   float64
	Dur   time.Duration
	IsDur bool
}

// Number is the value v of key.
func Number(key string, v float64) Value { return Value{Key: key, Num: v} }

// Dur is the duration d of key.
func Dur(key string, d time.Duration) Value { return Value{Key: key, Dur: d, IsDur: true} }

func (v Value) zero() bool { return v.Num == 0 && v.Dur == 0 }

// ParamsOf holds vals (zero ones left out; a later value of a key
// replaces an earlier one).
func ParamsOf(vals ...Value) Params {
	var p Params
	for _, v := range vals {
		p = p.With(v)
	}
	return p
}

// With is p with v set (a zero v removes its key).
func (p Params) With(v Value) Params {
	i := p.index(v.Key)
	switch {
	case i < 0 && v.zero():
		return p
	case i < 0:
		return Params{vals: append(slices.Clip(p.vals), v)}
	case v.zero():
		return Params{vals: slices.Delete(slices.Clone(p.vals), i, i+1)}
	}
	vals := slices.Clone(p.vals)
	vals[i] = v
	return Params{vals: vals}
}

func (p Params) index(key string) int {
	for i, v := range p.vals {
		if v.Key == key {
			return i
		}
	}
	return -1
}

// Get is key's value; ok is false when p does not hold it.
func (p Params) Get(key string) (Value, bool) {
	if i := p.index(key); i >= 0 {
		return p.vals[i], true
	}
	return Value{}, false
}

// Num is key's number (0: not held).
func (p Params) Num(key string) float64 {
	v, _ := p.Get(key)
	return v.Num
}

// Duration is key's duration (0: not held). A number read from an old
// history, where a duration could be written as nanoseconds, counts as
// nanoseconds.
func (p Params) Duration(key string) time.Duration {
	v, _ := p.Get(key)
	if !v.IsDur {
		return time.Duration(v.Num)
	}
	return v.Dur
}

// IsZero reports whether p holds no value.
func (p Params) IsZero() bool { return len(p.vals) == 0 }

// Len is how many values p holds.
func (p Params) Len() int { return len(p.vals) }

// All yields p's values in the order they were set.
func (p Params) All() iter.Seq[Value] { return slices.Values(p.vals) }

// Equal reports whether p and q hold the same values (in any order).
func (p Params) Equal(q Params) bool {
	if len(p.vals) != len(q.vals) {
		return false
	}
	for _, v := range p.vals {
		w, ok := q.Get(v.Key)
		if !ok || w != v {
			return false
		}
	}
	return true
}

// String is p as "key=value ...", for messages.
func (p Params) String() string {
	var b []byte
	for i, v := range p.vals {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(append(b, v.Key...), '=')
		b = append(b, v.text()...)
	}
	return string(b)
}

func (v Value) text() string {
	if v.IsDur {
		return v.Dur.String()
	}
	return fmt.Sprint(v.Num)
}

// MarshalJSON writes p as an object in the order its values were set.
func (p Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range p.vals {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(v.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		var val []byte
		if v.IsDur {
			val, err = Duration(v.Dur).MarshalJSON()
		} else {
			val, err = json.Marshal(v.Num)
		}
		if err != nil {
			return nil, fmt.Errorf("param %s: %w", v.Key, err)
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object of numbers and duration strings, keeping
// its order.
func (p *Params) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("params: want an object, got %s", b)
	}
	*p = Params{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("params: %w", err)
		}
		key, _ := t.(string)
		t, err = dec.Token()
		if err != nil {
			return fmt.Errorf("params: %s: %w", key, err)
		}
		switch val := t.(type) {
		case json.Number:
			f, err := val.Float64()
			if err != nil {
				return fmt.Errorf("params: %s: %w", key, err)
			}
			*p = p.With(Number(key, f))
		case string:
			d, err := time.ParseDuration(val)
			if err != nil {
				return fmt.Errorf("params: %s: want a number or a duration like \"20ms\", got %q", key, val)
			}
			*p = p.With(Dur(key, d))
		default:
			return fmt.Errorf("params: %s: want a number or a duration like \"20ms\", got %v", key, t)
		}
	}
	return nil
}
