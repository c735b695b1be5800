package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/report"
)

// CheckLoopback accepts only an address on the loopback interface:
// 127.0.0.0/8, ::1 or localhost, with a port. Nothing of the project
// listens beyond 127.0.0.1.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want HOST:PORT on loopback, e.g. 127.0.0.1:8090 (%v)", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		what := "not a loopback address"
		switch {
		case host == "":
			what = "no host means every interface"
		case ip == nil:
			what = "not an IP address (names other than localhost are not accepted)"
		case ip.IsUnspecified():
			what = "every interface"
		}
		return fmt.Errorf("%q: %s; the live page is served on loopback only (127.0.0.0/8 or ::1), e.g. 127.0.0.1:%s", addr, what, port)
	}
	return nil
}

// server serves the live page and streams the board's changes to it as
// server-sent events. The page arrives with every change since the watch
// began (so it is drawn at once, however late it is opened), then follows
// the stream from there: each change as it comes, with its sequence
// number as the event ID (a browser that reconnects resumes where it
// stopped), and a tick with every node's rates twice a second.
type server struct {
	run string
	ln  net.Listener
	srv *http.Server

	mu      sync.Mutex
	backlog []json.RawMessage // changes as the page reads them (wire), oldest first
	base    int64             // sequence number of backlog[0]
	first   time.Time
	members map[election.NodeID]bool
	pal     map[string]string
	last    *tickData
	subs    map[chan []byte]bool
}

// maxBacklog bounds the changes kept for pages that open later; beyond
// it the oldest half is forgotten (a page then begins later).
const maxBacklog = 200_000

// subBuffer is how many events a slow page may lag before it is cut off
// (its browser reconnects and resumes).
const subBuffer = 4096

// retryMillis is how long a browser waits before it reconnects.
const retryMillis = 2000

func listen(addr, run string) (*server, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, fmt.Errorf("watch: --http %w", err)
	}
	if h, p, _ := net.SplitHostPort(addr); h == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", p)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("watch: --http: %w", err)
	}
	s := &server{run: run, ln: ln, base: 1, members: map[election.NodeID]bool{}, pal: map[string]string{}, subs: map[chan []byte]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	s.srv = &http.Server{Handler: s.localOnly(mux), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *server) url() string { return "http://" + s.ln.Addr().String() + "/" }

// endStreams ends every open event stream (their browsers reconnect).
func (s *server) endStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		close(ch)
		delete(s.subs, ch)
	}
}

func (s *server) close() {
	s.endStreams()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
}

// localOnly refuses requests whose Host is not a loopback name: a web
// page elsewhere cannot read the view through a name it rebinds to
// 127.0.0.1.
func (s *server) localOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "only loopback names are served", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// initial is what the page is born with: everything so far.
type initial struct {
	Run     string            `json:"run"`
	Start   int64             `json:"start"`
	Seq     int64             `json:"seq"` // of the last change included
	Palette map[string]string `json:"palette"`
	Changes []json.RawMessage `json:"changes"`
	Tick    *tickData         `json:"tick,omitempty"`
}

func (s *server) page(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	in := initial{Run: s.run, Start: millis(s.startLocked()), Seq: s.base + int64(len(s.backlog)) - 1,
		Palette: maps.Clone(s.pal), Changes: slices.Clone(s.backlog), Tick: s.last}
	s.mu.Unlock()
	// json.Marshal escapes <, > and &: nothing in it can end the script
	// element it sits in.
	data, err := json.Marshal(in)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	w.Header().Set("Cache-Control", "no-store")
	head, tail, _ := strings.Cut(livePage, initialMark)
	io.WriteString(w, head)
	w.Write(data)
	io.WriteString(w, tail)
}

func (s *server) startLocked() time.Time {
	if s.first.IsZero() {
		return time.Now()
	}
	return s.first
}

func frame(id int64, event string, data []byte) []byte {
	if id > 0 {
		return fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", id, event, data)
	}
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, data)
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // only types of this package, which always marshal
	}
	return data
}

// wire is a change as the page reads it: the change plus its time in
// milliseconds.
type wire struct {
	T int64 `json:"t"`
	Change
}

func millis(t time.Time) int64 { return t.UnixMilli() }

func (s *server) broadcastLocked(ev []byte) {
	for ch := range s.subs {
		select {
		case ch <- ev:
		default:
			close(ch) // too slow: it reconnects and resumes
			delete(s.subs, ch)
		}
	}
}

// publish records a change and sends it to every open page.
func (s *server) publish(c Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() || c.Time.Before(s.first) {
		s.first = c.Time
	}
	if c.NodeStatus != nil && !s.members[c.Node] {
		s.members[c.Node] = true
		s.pal = s.palette()
		s.broadcastLocked(frame(0, "palette", mustJSON(s.pal)))
	}
	data := json.RawMessage(mustJSON(wire{T: millis(c.Time), Change: c}))
	if len(s.backlog) >= maxBacklog {
		s.backlog = slices.Delete(s.backlog, 0, maxBacklog/2)
		s.base += maxBacklog / 2
	}
	s.backlog = append(s.backlog, data)
	s.broadcastLocked(frame(s.base+int64(len(s.backlog))-1, "change", data))
}

// palette maps each leader ID (and 0, no leader) to the colour
// report.html paints it with for this membership.
func (s *server) palette() map[string]string {
	ms := slices.Sorted(maps.Keys(s.members))
	out := map[string]string{"0": report.LeaderColour(ms, 0)}
	for _, m := range ms {
		out[strconv.Itoa(int(m))] = report.LeaderColour(ms, m)
	}
	return out
}

// tickData is the tick event: now, every node's status, the alarm.
type tickData struct {
	T             int64             `json:"t"`
	Nodes         []NodeStatus      `json:"nodes"`
	Leaders       []election.NodeID `json:"leaders,omitempty"`
	PausedLeaders []election.NodeID `json:"paused_leaders,omitempty"`
	AlarmSince    int64             `json:"alarm_since,omitempty"`
}

// tick sends every node's status at now to every open page.
func (s *server) tick(b *Board, now time.Time) {
	d := &tickData{T: millis(now), Nodes: b.Status(now)}
	if l, p, since := b.Alarm(); l != nil {
		d.Leaders, d.PausedLeaders, d.AlarmSince = l, p, millis(since)
	}
	ev := frame(0, "tick", mustJSON(d))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = d
	s.broadcastLocked(ev)
}

// events streams the changes after the one the page has (?after=N, or
// the Last-Event-ID of a reconnecting browser). When those are no longer
// kept, it starts the page over with a hello and everything kept.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	after := int64(-1)
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			after = n
			break
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	ch := make(chan []byte, subBuffer)
	var out [][]byte
	s.mu.Lock()
	out = append(out, fmt.Appendf(nil, "retry: %d\n\n", retryMillis))
	from := after + 1
	if after < 0 || from < s.base {
		out = append(out, frame(0, "hello", mustJSON(map[string]any{"run": s.run, "start": millis(s.startLocked())})))
		from = s.base
	}
	out = append(out, frame(0, "palette", mustJSON(s.pal)))
	for i := max(from-s.base, 0); i < int64(len(s.backlog)); i++ {
		out = append(out, frame(s.base+i, "change", s.backlog[i]))
	}
	if s.last != nil {
		out = append(out, frame(0, "tick", mustJSON(s.last)))
	}
	s.subs[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	for _, ev := range out {
		if _, err := w.Write(ev); err != nil {
			return
		}
	}
	fl.Flush()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if _, err := w.Write(ev); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// listening reports whether a page holds an event stream open.
func (s *server) listening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs) > 0
}
