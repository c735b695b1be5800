package program

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ringleader-dev/ringleader/election"
)

// Serve is the program side of the protocol for an algorithm written in
// Go: it reads events from in, plays them on alg's machines (a start
// builds a new one from its init: the reset) and writes each answer to
// out, until in ends (nil) or a line it cannot serve (the error, after
// which the runtime sees the program exit). The answer to a start carries
// alg's claims and message classes.
func Serve(in io.Reader, out io.Writer, alg election.Algorithm) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var m election.Machine
	var buf []byte // the answer's line, reused
	for line := uint64(1); ; line++ {
		b, err := readLine(r)
		if errors.Is(err, io.EOF) && len(b) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		req, ok := decodeRequestFast(b)
		if !ok {
			req = Request{}
			if err := json.Unmarshal(b, &req); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
		}
		if req.V != Version {
			return fmt.Errorf("line %d: field v: %d, want %d", line, req.V, Version)
		}
		a := Answer{V: Version, Seq: req.Seq}
		if req.Event.Kind == election.EventStart {
			if req.Init == nil {
				return fmt.Errorf("line %d: field init: a start needs one", line)
			}
			cfg := req.Init.Config()
			if m, err = alg.New(cfg); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			if alg.Claims != nil { // an algorithm may claim nothing
				a.Claims = alg.Claims(cfg.Quorum)
			}
			a.ElectionTypes, a.AnnounceTypes = alg.ElectionTypes, alg.AnnounceTypes
		}
		if m == nil {
			return fmt.Errorf("line %d: %s before any start", line, req.Event.Kind)
		}
		a.Effects = m.Step(req.Event)
		if a.Effects == nil {
			a.Effects = []election.Effect{}
		}
		if out, ok := appendAnswer(buf[:0], &a); ok {
			buf = out
			if _, err := w.Write(out); err != nil {
				return err
			}
		} else if err := enc.Encode(&a); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// readLine reads one line of at most MaxLine bytes, its newline included,
// and returns it without the newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine || (err != nil && len(line)+len(chunk) == MaxLine) {
			return nil, fmt.Errorf("longer than %d bytes (program.MaxLine)", MaxLine)
		}
		switch err {
		case nil:
			return append(line, chunk[:len(chunk)-1]...), nil
		case bufio.ErrBufferFull:
			line = append(line, chunk...)
		default:
			return append(line, chunk...), err
		}
	}
}
