package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
)

// svgPlot is a drawing as lists of primitives; the template writes them in
// this order (rects under lines under texts), so the order of each list is
// the stacking order.
type svgPlot struct {
	W, H  float64
	Rects []svgRect
	Lines []svgLine
	Dots  []svgDot
	Texts []svgText
}

type svgRect struct {
	X, Y, W, H float64
	Fill       string
	Stroke     string
	StrokeW    float64
	Dash       string
	Opacity    float64 // 0 means 1
	Title      string
	Class      string
}

type svgLine struct {
	X1, Y1, X2, Y2 float64
	Stroke         string
	W              float64
	Dash           string
	Marker         string // id of an arrowhead marker, or ""
	Title          string
}

type svgDot struct {
	X, Y, R float64
	Fill    string
	Stroke  string
	Title   string
}

type svgText struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle, end
	Fill   string
	Size   float64
	Bold   bool
	Halo   bool // a white outline, to stay legible over lines
	Title  string
}

// Colours. Leaders get a colour-blind-safe qualitative palette indexed by
// the ID's rank from the top of the membership, so one cluster's reports
// always paint node 5 the same way, and the IDs that lead most often (the
// highest, in Bully) get the most distinct colours.
const (
	undecidedFill = "#d4d4d4"
	laneFill      = "#f7f7f7"
	leaderStroke  = "#111111"
	killColour    = "#c62828"
	pauseColour   = "#283593"
	undoColour    = "#2e7d32"
	failedColour  = "#9e9e9e"
	splitColour   = "#d50000"
	checkColour   = "#555555"
	stepColour    = "#616161"
)

// basePalette is Okabe and Ito's colour-blind-safe set ("Color Universal
// Design", 2008) without its black (the outline of a node that believes it
// leads) and its vermillion (too near the red of kills and split brain),
// ordered so that neighbouring ranks never share a hue family: blue,
// orange, bluish green, reddish purple, sky blue, yellow. Beyond six it
// goes on with Paul Tol's "muted" colours that are not red.
var basePalette = []string{
	"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#F0E442",
	"#332288", "#999933", "#88CCEE", "#117733", "#DDCC77", "#AA4499",
}

type palette struct{ rank map[election.NodeID]int }

// newPalette ranks members from the highest ID down.
func newPalette(members []election.NodeID) palette {
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	p := palette{rank: map[election.NodeID]int{}}
	for i, m := range sorted {
		p.rank[m] = i
	}
	return p
}

// colour is the fill for a view whose leader is id (0: undecided).
func (p palette) colour(id election.NodeID) string {
	if id == 0 {
		return undecidedFill
	}
	i, ok := p.rank[id]
	if !ok {
		i = len(p.rank) + int(id)
	}
	if i < len(basePalette) {
		return basePalette[i]
	}
	// Beyond the palette (IDs are written in the bars, colour alone no
	// longer tells them apart), walk the hue circle by the golden angle
	// so neighbours stay distinct, stepping over the reds kept for faults.
	h := (i * 137) % 360
	if h < 25 || h > 335 {
		h = (h + 60) % 360
	}
	return fmt.Sprintf("hsl(%d,55%%,48%%)", h)
}

// LeaderColour is the fill report.html gives a view whose leader is
// leader (0: no leader) in a cluster of members; ringleader watch's live
// page paints its lanes with it.
func LeaderColour(members []election.NodeID, leader election.NodeID) string {
	return newPalette(members).colour(leader)
}

// ink is a text colour readable on fill.
func ink(fill string) string {
	if len(fill) == 7 && fill[0] == '#' {
		r, _ := strconv.ParseUint(fill[1:3], 16, 8)
		g, _ := strconv.ParseUint(fill[3:5], 16, 8)
		b, _ := strconv.ParseUint(fill[5:7], 16, 8)
		if 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) > 150 {
			return "#222"
		}
	}
	return "#fff"
}

// legend lists every kind of mark the timeline draws: the leader colours
// seen, the lane states, and each kind of fault, strip and marker the run
// has. Nothing drawn is left unexplained; nothing absent is listed.
func legend(tl *check.Timeline, sb check.SplitBrainEvidence, pal palette, r Report, checkpoints []time.Time, fold bool) []legendItem {
	var out []legendItem
	seen := map[election.NodeID]bool{}
	candidate, undecided := false, false
	for _, l := range tl.Lanes {
		for _, v := range l.Views {
			seen[v.View.Leader] = true
			switch {
			case v.View.Role == election.Candidate:
				candidate = true
			case v.View.Leader == 0:
				undecided = true
			}
		}
	}
	down, paused := false, false
	for _, l := range tl.Lanes {
		for _, st := range l.States {
			down = down || st.State == check.Down
			paused = paused || st.State == check.Paused
		}
	}
	sorted := slices.Clone(tl.Members)
	slices.Sort(sorted)
	for _, m := range sorted {
		if seen[m] {
			out = append(out, legendItem{Label: fmt.Sprintf("believes %d leads", m), Fill: pal.colour(m), Kind: "swatch"})
		}
	}
	add := func(ok bool, it legendItem) {
		if ok {
			out = append(out, it)
		}
	}
	add(undecided || !candidate, legendItem{Label: "no leader (undecided)", Fill: undecidedFill, Kind: "swatch"})
	add(candidate, legendItem{Label: "? candidate: electing, no leader yet", Fill: undecidedFill, Kind: "candidate"})
	add(true, legendItem{Label: "★ node believes it is the leader", Stroke: leaderStroke, Kind: "leader"})
	add(down, legendItem{Label: "down (killed / stopped)", Kind: "hatch"})
	add(paused, legendItem{Label: "paused (view frozen)", Kind: "paused"})
	ops := map[chaos.Op]bool{}
	failed := false
	for _, f := range tl.Faults {
		ops[chaos.Op(f.Op)] = true
		failed = failed || f.Failed
	}
	out = append(out, faultLegend(ops)...)
	add(failed, legendItem{Label: "fault that failed", Stroke: failedColour, Kind: "dash"})
	add(len(sb.Overlaps) > 0, legendItem{Label: "split brain: two or more acting leaders", Fill: splitColour, Kind: "strip"})
	add(len(sb.StaleOverlaps) > 0, legendItem{Label: "stale leader: a paused node still believes it leads beside another", Fill: splitColour, Kind: "stale"})
	add(len(checkpoints) > 0, legendItem{Label: "checkpoint: agreement and bully-max judged", Stroke: checkColour, Kind: "checkpoint"})
	add(len(r.Steps) > 0, legendItem{Label: "scenario step (see the table below)", Fill: stepColour, Kind: "marker"})
	pass, fail := false, false
	for _, e := range r.Expectations {
		pass, fail = pass || e.Pass, fail || !e.Pass
	}
	add(pass, legendItem{Label: "expectation held", Fill: undoColour, Kind: "marker"})
	add(fail, legendItem{Label: "expectation failed", Fill: killColour, Kind: "marker"})
	add(fold, legendItem{Label: "boot, squeezed (the whole run to scale is below)", Kind: "fold"})
	return out
}

// scale maps instants of the timeline to x. With a fold, the stretch from
// the start to fold (the cluster booting and electing its first leader) is
// squeezed into foldW pixels and the rest of the width shows the run from
// the moment the cluster first settled.
type scale struct {
	start, end time.Time
	fold       time.Time // zero: no fold
	left       float64
	width      float64
	foldW      float64
}

// foldGap is the white break between the squeezed boot and the rest.
const foldGap = 6.0

func frac(d, of time.Duration) float64 {
	if of <= 0 {
		return 0
	}
	return float64(d) / float64(of)
}

func (s scale) x(t time.Time) float64 {
	if t.Before(s.start) {
		t = s.start
	}
	if t.After(s.end) {
		t = s.end
	}
	if s.fold.IsZero() {
		return s.left + s.width*frac(t.Sub(s.start), s.end.Sub(s.start))
	}
	if t.Before(s.fold) {
		return s.left + s.foldW*frac(t.Sub(s.start), s.fold.Sub(s.start))
	}
	rest := s.left + s.foldW + foldGap
	return rest + (s.left+s.width-rest)*frac(t.Sub(s.fold), s.end.Sub(s.fold))
}

// labelRows places labels left to right in the first row where they do not
// collide with the previous label; it returns each label's row.
type labelRows struct{ ends []float64 }

func (lr *labelRows) place(x, w float64) int {
	for i, e := range lr.ends {
		if x >= e {
			lr.ends[i] = x + w
			return i
		}
	}
	lr.ends = append(lr.ends, x+w)
	return len(lr.ends) - 1
}

// textWidth is a generous estimate of a label's width in the page's sans
// serif: generous, so that labels laid out by it never touch.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s))*size*0.64 + 6
}

// faultColour is how a fault is drawn: its kind's mark (chaos.Kind), or
// grey and dashed when it failed.
func faultColour(f check.FaultSpan) (colour, dash string) {
	if f.Failed {
		return failedColour, "3,3"
	}
	k, ok := chaos.KindOf(chaos.Op(f.Op))
	if !ok {
		return failedColour, "4,3"
	}
	if k.Mark.Shape == chaos.MarkDash {
		return k.Mark.Colour, "4,3"
	}
	return k.Mark.Colour, ""
}

// faultLegend has one entry per mark among the kinds the run used, bands
// first, in the kinds' order; kinds sharing a label share the entry.
func faultLegend(used map[chaos.Op]bool) []legendItem {
	var bands, marks []legendItem
	seen := map[string]bool{}
	for _, k := range chaos.Kinds() {
		if !used[k.Op] || seen[k.Mark.Legend] {
			continue
		}
		seen[k.Mark.Legend] = true
		it := legendItem{Label: k.Mark.Legend, Kind: string(k.Mark.Shape)}
		if k.Mark.Shape == chaos.MarkBand {
			it.Fill = k.Mark.Colour
			bands = append(bands, it)
			continue
		}
		it.Stroke = k.Mark.Colour
		marks = append(marks, it)
	}
	return append(bands, marks...)
}

func faultTitle(tl *check.Timeline, f check.FaultSpan) string {
	s := fmt.Sprintf("%s\ninvoked %s", f.Label, offset(tl, f.Invoked))
	if !f.Applied.IsZero() {
		s += fmt.Sprintf(", in effect %s (took %s)", offset(tl, f.Applied), millis.Of(f.Applied.Sub(f.Invoked)))
	}
	if f.Until.After(f.At()) {
		s += fmt.Sprintf(", until %s", offset(tl, f.Until))
	}
	if f.Target != "" {
		s += "\ntarget: " + f.Target
	}
	if f.Note != "" {
		s += "\n" + f.Note
	}
	if f.Error != "" {
		s += "\nerror: " + f.Error
	}
	return s
}

func viewTitle(tl *check.Timeline, v check.ViewSpan) string {
	l := "none"
	if v.View.Leader != 0 {
		l = strconv.Itoa(int(v.View.Leader))
	}
	return fmt.Sprintf("node %d: leader %s, epoch %d, role %s\n%s → %s (%s)", v.Node, l, v.View.Epoch, v.View.Role,
		offset(tl, v.Start), offset(tl, v.End), millis.Of(v.End.Sub(v.Start)))
}

// niceStep picks a tick step of 1, 2 or 5 times a power of ten
// milliseconds giving at most max ticks over span.
func niceStep(span time.Duration, max int) time.Duration {
	for p := time.Millisecond; ; p *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if st := p * m; span/st <= time.Duration(max) {
				return st
			}
		}
		if p > time.Duration(math.MaxInt64/100) {
			return span
		}
	}
}

// bootEnd is where the timeline opens: the instant the cluster first
// settled, when booting took a noticeable share of the run (a tenth or
// more) and no fault came before it; zero otherwise.
func bootEnd(tl *check.Timeline, an *check.Analysis) time.Time {
	if len(an.Elections) == 0 {
		return time.Time{}
	}
	e := an.Elections[0]
	span := tl.End.Sub(tl.Start)
	if e.Agreed.IsZero() || !e.Agreed.Before(tl.End) || e.Start.Sub(tl.Start) > span/100 || e.Agreed.Sub(tl.Start) < span/10 {
		return time.Time{}
	}
	for _, f := range tl.Faults {
		if f.Invoked.Before(e.Agreed) {
			return time.Time{}
		}
	}
	return e.Agreed
}

// marker is a numbered circle under the axis: a scenario step, or the
// expectation it checked, keyed to the steps table.
type marker struct {
	at    time.Time
	label string
	title string
	fill  string
}

// dodge spreads items of width w, wanted at xs (ascending), so that no two
// overlap and none leaves [lo, hi]: each moves as little as it must, and
// their order is kept, so the leader lines from the wanted x to the placed
// one never cross.
func dodge(xs []float64, w, lo, hi float64) []float64 {
	out := slices.Clone(xs)
	for i := range out {
		out[i] = math.Max(out[i], lo+w/2)
		if i > 0 {
			out[i] = math.Max(out[i], out[i-1]+w)
		}
	}
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = math.Min(out[i], hi-w/2)
		if i < len(out)-1 {
			out[i] = math.Min(out[i], out[i+1]-w)
		}
	}
	return out
}

type timelineOpts struct {
	fold        time.Time // zero: the whole run to scale
	checkpoints []time.Time
	markers     []marker
}

func timelinePlot(tl *check.Timeline, sb check.SplitBrainEvidence, pal palette, o timelineOpts) *svgPlot {
	const (
		W       = 1200.0
		left    = 70.0
		right   = 16.0
		rowH    = 15.0
		laneH   = 22.0
		laneGap = 8.0
		fsize   = 11.0
		foldW   = 64.0
	)
	sc := scale{start: tl.Start, end: tl.End, fold: o.fold, left: left, width: W - left - right, foldW: foldW}
	if !sc.end.After(sc.start) {
		sc.end = sc.start.Add(time.Second)
	}
	p := &svgPlot{W: W}

	// Fault labels go in rows above the lanes, never touching.
	var rows labelRows
	type placed struct {
		f   check.FaultSpan
		row int
	}
	var faults []placed
	for _, f := range tl.Faults {
		x, w := sc.x(f.At()), textWidth(f.Label, fsize)
		faults = append(faults, placed{f, rows.place(labelX(x, w, W-right), w+4)})
	}
	top := 6 + float64(len(rows.ends))*rowH + 4
	lanesTop := top
	lanesBottom := lanesTop + float64(len(tl.Lanes))*(laneH+laneGap) - laneGap

	// Lane backgrounds, under the grid.
	for i := range tl.Lanes {
		y := lanesTop + float64(i)*(laneH+laneGap)
		p.Rects = append(p.Rects, svgRect{X: left, Y: y, W: sc.width, H: laneH, Fill: laneFill, Stroke: "#e0e0e0", StrokeW: 1})
	}

	// Ticks: over the part drawn to scale.
	tickFrom := sc.start
	if !o.fold.IsZero() {
		tickFrom = o.fold
	}
	step := niceStep(sc.end.Sub(tickFrom), 12)
	var ticks []time.Duration
	first := tickFrom.Sub(sc.start)
	first = (first + step - 1) / step * step
	for d := first; d <= sc.end.Sub(sc.start); d += step {
		ticks = append(ticks, d)
	}
	for _, d := range ticks {
		x := sc.x(tl.Start.Add(d))
		// A rect, not a line: drawn under the lanes' bars, not across them.
		p.Rects = append(p.Rects, svgRect{X: x - 0.5, Y: lanesTop - 2, W: 1, H: lanesBottom - lanesTop + 4, Fill: "#e6e6e6"})
	}

	// Fault bands (under the lanes' content is too faint; over it, but
	// translucent).
	var bandRects []svgRect
	for _, pf := range faults {
		f := pf.f
		col, _ := faultColour(f)
		if k, ok := chaos.KindOf(chaos.Op(f.Op)); ok && k.Mark.Shape == chaos.MarkBand {
			if !f.Failed && f.Until.After(f.At()) {
				x1, x2 := sc.x(f.At()), sc.x(f.Until)
				bandRects = append(bandRects, svgRect{X: x1, Y: lanesTop - 3, W: math.Max(x2-x1, 1), H: lanesBottom - lanesTop + 6, Fill: col, Opacity: 0.13, Title: faultTitle(tl, f)})
			}
		}
	}

	// Lanes.
	for i, lane := range tl.Lanes {
		y := lanesTop + float64(i)*(laneH+laneGap)
		p.Texts = append(p.Texts, svgText{X: left - 8, Y: y + laneH/2 + 4, Text: fmt.Sprintf("node %d", lane.Node), Anchor: "end", Fill: "#222", Size: 12, Bold: true})
		for _, st := range lane.States {
			if st.State != check.Down {
				continue
			}
			x1, x2 := sc.x(st.Start), sc.x(st.End)
			p.Rects = append(p.Rects, svgRect{X: x1, Y: y, W: math.Max(x2-x1, 1), H: laneH, Fill: "url(#rl-hatch)", Stroke: "#bdbdbd", StrokeW: 0.5,
				Title: fmt.Sprintf("node %d down\n%s → %s (%s)", lane.Node, offset(tl, st.Start), offset(tl, st.End), millis.Of(st.End.Sub(st.Start)))})
		}
		for _, v := range lane.Views {
			x1, x2 := sc.x(v.Start), sc.x(v.End)
			w := math.Max(x2-x1, 1.5)
			fill := pal.colour(v.View.Leader)
			rect := svgRect{X: x1, Y: y + 2, W: w, H: laneH - 4, Fill: fill, Title: viewTitle(tl, v)}
			switch v.View.Role {
			case election.Leader:
				rect.Stroke, rect.StrokeW = leaderStroke, 2
				rect.Y, rect.H = y+1, laneH-2
			case election.Candidate:
				rect.Stroke, rect.StrokeW, rect.Dash = "#616161", 1, "3,2"
			}
			p.Rects = append(p.Rects, rect)
			label := ""
			switch {
			case v.View.Role == election.Leader:
				label = fmt.Sprintf("★ %d", v.View.Leader)
			case v.View.Leader != 0:
				label = strconv.Itoa(int(v.View.Leader))
			case v.View.Role == election.Candidate:
				label = "?"
			}
			if label != "" && w >= textWidth(label, fsize)+2 {
				p.Texts = append(p.Texts, svgText{X: x1 + w/2, Y: y + laneH/2 + 4, Text: label, Anchor: "middle", Fill: ink(fill), Size: fsize, Bold: v.View.Role == election.Leader, Title: rect.Title})
			}
		}
		for _, st := range lane.States {
			if st.State != check.Paused {
				continue
			}
			x1, x2 := sc.x(st.Start), sc.x(st.End)
			w := math.Max(x2-x1, 1)
			title := fmt.Sprintf("node %d paused (its view is frozen)\n%s → %s (%s)", lane.Node, offset(tl, st.Start), offset(tl, st.End), millis.Of(st.End.Sub(st.Start)))
			p.Rects = append(p.Rects, svgRect{X: x1, Y: y, W: w, H: laneH, Fill: "url(#rl-paused)", Stroke: pauseColour, StrokeW: 1.2, Dash: "3,2", Title: title})
		}
	}
	p.Rects = append(p.Rects, bandRects...)

	// The fold: a white break after the squeezed boot, across the lanes.
	if !o.fold.IsZero() {
		bx := left + foldW
		title := fmt.Sprintf("boot: from the cluster's start to %s, when it first settled, squeezed into this strip; the whole run to scale is under the timeline", offset(tl, o.fold))
		p.Rects = append(p.Rects, svgRect{X: bx, Y: lanesTop - 4, W: foldGap, H: lanesBottom - lanesTop + 8, Fill: "#ffffff", Title: title})
		p.Texts = append(p.Texts, svgText{X: left + foldW/2, Y: lanesTop - 6, Text: "boot", Anchor: "middle", Fill: "#757575", Size: 10, Title: title})
	}

	// Fault lines and labels.
	for _, pf := range faults {
		f := pf.f
		col, dash := faultColour(f)
		x := sc.x(f.At())
		ly := 6 + float64(pf.row)*rowH + 10
		title := faultTitle(tl, f)
		p.Lines = append(p.Lines, svgLine{X1: x, Y1: ly + 2, X2: x, Y2: lanesBottom + 3, Stroke: col, W: 1.5, Dash: dash, Title: title})
		p.Texts = append(p.Texts, anchored(svgText{X: x, Y: ly, Text: f.Label, Fill: col, Size: fsize, Bold: true, Title: title}, W-right))
	}

	// Checkpoints at which agreement and bully-max were judged.
	for _, cp := range o.checkpoints {
		x := sc.x(cp)
		title := "checkpoint " + offset(tl, cp) + ": agreement and bully-max judged here"
		p.Lines = append(p.Lines, svgLine{X1: x, Y1: lanesTop - 3, X2: x, Y2: lanesBottom + 3, Stroke: checkColour, W: 1, Dash: "1,3", Title: title})
		p.Dots = append(p.Dots, svgDot{X: x, Y: lanesBottom + 6, R: 3, Fill: checkColour, Title: title})
	}

	y := lanesBottom + 12
	// The split-brain strip: every instant with two or more leaders. A
	// stretch where one of them was frozen (paused) is drawn paler: a
	// stale belief, not two acting leaders.
	overlaps := append(slices.Clone(sb.Overlaps), sb.StaleOverlaps...)
	if len(overlaps) > 0 {
		p.Texts = append(p.Texts, svgText{X: left - 8, Y: y + 9, Text: "≥2 leaders", Anchor: "end", Fill: splitColour, Size: 10, Bold: true})
		p.Rects = append(p.Rects, svgRect{X: left, Y: y, W: sc.width, H: 12, Fill: "#fff5f5", Stroke: "#f3c4c4", StrokeW: 0.5})
		for _, ov := range overlaps {
			x1, x2 := sc.x(ov.Start), sc.x(ov.End)
			t := fmt.Sprintf("nodes %d and %d both leaders\n%s → %s (%s)", ov.Nodes[0], ov.Nodes[1], offset(tl, ov.Start), offset(tl, ov.End), millis.Of(ov.Duration))
			opacity := 0.75
			if len(ov.Paused) > 0 {
				t += fmt.Sprintf("\nnode %s was paused: a stale leader that could not act (not split brain)", idsText(ov.Paused))
				opacity = 0.25
			}
			p.Rects = append(p.Rects, svgRect{X: x1, Y: y, W: math.Max(x2-x1, 1.5), H: 12, Fill: splitColour, Opacity: opacity, Title: t})
		}
		y += 18
	}

	// Axis, broken after the fold.
	if o.fold.IsZero() {
		p.Lines = append(p.Lines, svgLine{X1: left, Y1: y, X2: left + sc.width, Y2: y, Stroke: "#616161", W: 1})
	} else {
		bx := left + foldW
		p.Lines = append(p.Lines,
			svgLine{X1: left, Y1: y, X2: bx, Y2: y, Stroke: "#616161", W: 1},
			svgLine{X1: bx + foldGap, Y1: y, X2: left + sc.width, Y2: y, Stroke: "#616161", W: 1},
			svgLine{X1: bx - 3, Y1: y + 5, X2: bx + 1, Y2: y - 5, Stroke: "#616161", W: 1},
			svgLine{X1: bx + foldGap - 1, Y1: y + 5, X2: bx + foldGap + 3, Y2: y - 5, Stroke: "#616161", W: 1})
		p.Texts = append(p.Texts, svgText{X: left, Y: y + 15, Text: "+0 ms", Anchor: "start", Fill: "#424242", Size: 10})
	}
	lastEnd := math.Inf(-1)
	if !o.fold.IsZero() {
		lastEnd = left + textWidth("+0 ms", 10)
	}
	for _, d := range ticks {
		x := sc.x(tl.Start.Add(d))
		label := millis.Offset(d)
		w := textWidth(label, 10)
		p.Lines = append(p.Lines, svgLine{X1: x, Y1: y, X2: x, Y2: y + 4, Stroke: "#616161", W: 1})
		if x-w/2 < lastEnd+4 || x+w/2 > W {
			continue // a tick label that would touch its neighbour is left out
		}
		p.Texts = append(p.Texts, svgText{X: x, Y: y + 15, Text: label, Anchor: "middle", Fill: "#424242", Size: 10, Halo: true})
		lastEnd = x + w/2
	}
	y += 22

	// Step and expectation markers: numbered circles, spread so that they
	// never touch, each joined to its instant on the axis.
	if len(o.markers) > 0 {
		ms := slices.Clone(o.markers)
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].at.Before(ms[j].at) })
		const r = 8.0
		// More markers than one row holds: deal them round-robin into
		// rows, each spread on its own.
		nrows := int(math.Ceil(float64(len(ms)) * (2*r + 3) / (W - right - left)))
		for row := range nrows {
			var idx []int
			var want []float64
			for i := row; i < len(ms); i += nrows {
				idx = append(idx, i)
				want = append(want, sc.x(ms[i].at))
			}
			got := dodge(want, 2*r+3, left-r, W-right)
			cy := y + 8 + float64(row)*(2*r+4)
			for k, i := range idx {
				m := ms[i]
				p.Lines = append(p.Lines, svgLine{X1: want[k], Y1: y - 22, X2: want[k], Y2: y - 17, Stroke: m.fill, W: 1.2, Title: m.title},
					svgLine{X1: want[k], Y1: y - 17, X2: got[k], Y2: cy - r, Stroke: m.fill, W: 1, Title: m.title})
				p.Dots = append(p.Dots, svgDot{X: got[k], Y: cy, R: r, Fill: m.fill, Stroke: "#fff", Title: m.title})
				p.Texts = append(p.Texts, svgText{X: got[k], Y: cy + 3.5, Text: m.label, Anchor: "middle", Fill: "#fff", Size: 9.5, Bold: true, Title: m.title})
			}
		}
		y += 8 + float64(nrows)*(2*r+4)
	}
	p.H = y + 4
	return p
}

// labelX is where a label of width w for an instant at x starts: right of
// the instant, or left of it when it would run past limit.
func labelX(x, w, limit float64) float64 {
	if x+3+w > limit {
		return x - 3 - w
	}
	return x + 3
}

// anchored places t's text right of t.X, or ends it left of t.X near the
// right edge.
func anchored(t svgText, limit float64) svgText {
	w := textWidth(t.Text, t.Size)
	if t.X+3+w > limit {
		t.X, t.Anchor = t.X-3, "end"
	} else {
		t.X += 3
	}
	return t
}

// msgKey matches a receive to its send: every field of the message.
type msgKey struct {
	typ            string
	from, to, cand election.NodeID
	epoch, seq     uint64
	phase, hop     int32
	dir, nmem      int
	reply          bool
}

func keyOf(m *election.Message, to election.NodeID) msgKey {
	return msgKey{typ: m.Type, from: m.From, to: to, cand: m.Candidate, epoch: m.Epoch, seq: m.Seq, phase: m.Phase, hop: m.Hop, dir: int(m.Dir), nmem: len(m.Members), reply: m.Reply}
}

func arrowStyle(class string) (colour, marker string) {
	switch class {
	case "election":
		return "#1565c0", "rl-arrow-election"
	case "announce":
		return "#2e7d32", "rl-arrow-announce"
	}
	return "#9e9e9e", "rl-arrow-other"
}

// sequencePlot draws messages as arrows between node columns, time flowing
// down. Rows are distinct instants, not proportional time: a 1 ms exchange
// and a 2 s silence would otherwise be unreadable on one page.
func sequencePlot(tl *check.Timeline, recs []history.Record, pal palette, a election.Algorithm) (*svgPlot, string) {
	n := len(tl.Members)
	var sends []history.Record
	classes := map[string]string{}
	for _, r := range recs {
		if r.Kind == history.KindSend && r.Msg != nil {
			sends = append(sends, r)
			classes[r.Msg.Type] = classOf(a, r.Msg.Type)
		}
	}
	if len(sends) == 0 {
		return nil, "The history records no messages, so there is no sequence diagram."
	}
	if n > MaxSequenceNodes {
		return nil, fmt.Sprintf("Sequence diagram omitted: %d nodes (drawn up to %d).", n, MaxSequenceNodes)
	}
	note := ""
	include := func(string) bool { return true }
	if len(sends) > MaxSequenceMessages {
		classified := len(a.ElectionTypes)+len(a.AnnounceTypes) > 0
		var core []history.Record
		for _, r := range sends {
			if c := classes[r.Msg.Type]; c == "election" || c == "announce" {
				core = append(core, r)
			}
		}
		if !classified || len(core) == 0 || len(core) > MaxSequenceMessages {
			return nil, fmt.Sprintf("Sequence diagram omitted: %d messages (drawn up to %d).", len(sends), MaxSequenceMessages)
		}
		note = fmt.Sprintf("Only election and announce messages are drawn: %d of %d; heartbeats and other maintenance messages are left out.", len(core), len(sends))
		include = func(t string) bool { c := classes[t]; return c == "election" || c == "announce" }
		sends = core
	}

	// Pair receives with sends, first in first out per identical message.
	// Indexes are positions in recs, which is in time order.
	type arrow struct {
		send, recv int // recv < 0: never received
		to         election.NodeID
	}
	var arrows []*arrow
	queue := map[msgKey][]*arrow{}
	broadcasts := map[msgKey][]int{}
	for i, r := range recs {
		if r.Msg == nil || !include(r.Msg.Type) {
			continue
		}
		switch r.Kind {
		case history.KindSend:
			if r.Msg.To == 0 {
				k := keyOf(r.Msg, 0)
				broadcasts[k] = append(broadcasts[k], i)
				continue
			}
			a := &arrow{send: i, recv: -1, to: r.Msg.To}
			arrows = append(arrows, a)
			k := keyOf(r.Msg, r.Msg.To)
			queue[k] = append(queue[k], a)
		case history.KindRecv:
			k := keyOf(r.Msg, r.Node)
			if q := queue[k]; len(q) > 0 {
				q[0].recv, queue[k] = i, q[1:]
			} else if b := broadcasts[keyOf(r.Msg, 0)]; len(b) > 0 {
				arrows = append(arrows, &arrow{send: b[0], recv: i, to: r.Node})
			}
		}
	}

	// Rows: one per event (a send, a receive, a fault), in time order, as
	// in a textbook sequence diagram; simultaneous events still get rows
	// of their own so their arrows do not pile up.
	type event struct {
		at  time.Time
		ord int // record index; faults sort first at their instant
	}
	var events []event
	for _, a := range arrows {
		events = append(events, event{recs[a.send].Time, a.send})
		if a.recv >= 0 {
			events = append(events, event{recs[a.recv].Time, a.recv})
		}
	}
	for i, f := range tl.Faults {
		events = append(events, event{f.At(), -1 - i})
	}
	slices.SortFunc(events, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.ord - b.ord
	})
	events = slices.CompactFunc(events, func(a, b event) bool { return a == b })
	rowOf := make(map[int]int, len(events))
	for i, e := range events {
		rowOf[e.ord] = i
	}

	const (
		top   = 40.0
		rowH  = 13.0
		left  = 110.0
		colW  = 140.0
		right = 150.0
	)
	col := map[election.NodeID]float64{}
	for i, m := range tl.Members {
		col[m] = left + float64(i)*colW
	}
	rowY := func(i int) float64 { return top + float64(i)*rowH }
	// yOf places an instant that is not an event (a view change, a state
	// change): at the first event at or after it, half a row earlier when
	// no event happens at that very instant.
	yOf := func(t time.Time) float64 {
		i := sort.Search(len(events), func(i int) bool { return !events[i].at.Before(t) })
		y := rowY(i)
		if i >= len(events) || !events[i].at.Equal(t) {
			y -= rowH / 2
		}
		return y
	}
	bottom := rowY(len(events))
	p := &svgPlot{W: left + float64(n-1)*colW + right, H: bottom + 20}

	// Node headers and lifelines coloured by view.
	for _, lane := range tl.Lanes {
		x := col[lane.Node]
		p.Texts = append(p.Texts, svgText{X: x, Y: 18, Text: fmt.Sprintf("node %d", lane.Node), Anchor: "middle", Fill: "#222", Size: 12, Bold: true})
		p.Lines = append(p.Lines, svgLine{X1: x, Y1: 26, X2: x, Y2: bottom, Stroke: "#cfcfcf", W: 1})
		for _, st := range lane.States {
			if st.State == check.Up {
				continue
			}
			fill, t := "url(#rl-hatch)", "down"
			if st.State == check.Paused {
				fill, t = "url(#rl-paused)", "paused"
			}
			y1, y2 := yOf(st.Start), yOf(st.End)
			p.Rects = append(p.Rects, svgRect{X: x - 9, Y: y1, W: 18, H: math.Max(y2-y1, 2), Fill: fill, Stroke: "#bdbdbd", StrokeW: 0.5,
				Title: fmt.Sprintf("node %d %s %s → %s", lane.Node, t, offset(tl, st.Start), offset(tl, st.End))})
		}
		for _, v := range lane.Views {
			y1, y2 := yOf(v.Start), yOf(v.End)
			r := svgRect{X: x - 3, Y: y1, W: 6, H: math.Max(y2-y1, 2), Fill: pal.colour(v.View.Leader), Title: viewTitle(tl, v)}
			if v.View.Role == election.Leader {
				r.X, r.W, r.Stroke, r.StrokeW = x-5, 10, leaderStroke, 1.5
			}
			p.Rects = append(p.Rects, r)
		}
	}

	// Faults as horizontal rules.
	for i, f := range tl.Faults {
		c, dash := faultColour(f)
		y := rowY(rowOf[-1-i])
		if dash == "" {
			dash = "6,3"
		}
		title := faultTitle(tl, f)
		p.Lines = append(p.Lines, svgLine{X1: left - 40, Y1: y, X2: p.W - 10, Y2: y, Stroke: c, W: 1, Dash: dash, Title: title})
		p.Texts = append(p.Texts, svgText{X: p.W - 12, Y: y - 3, Text: f.Label, Anchor: "end", Fill: c, Size: 10, Bold: true, Title: title})
	}

	// Time labels on the left: one per distinct offset as it is shown (two
	// rows in the same millisecond share one label), thinned so that they
	// never touch.
	lastY := -100.0
	lastText := ""
	for i, e := range events {
		y := rowY(i)
		t := offset(tl, e.at)
		if t == lastText || y-lastY < 14 {
			continue
		}
		p.Texts = append(p.Texts, svgText{X: left - 44, Y: y + 3, Text: t, Anchor: "end", Fill: "#757575", Size: 9})
		lastY, lastText = y, t
	}

	// Arrow labels are placed where they touch no other label: along the
	// arrow, first at its middle, then nearer either end; one that fits
	// nowhere is left to the arrow's tooltip (the note under the diagram
	// says so) rather than drawn over another.
	var taken []box
	for _, t := range p.Texts {
		taken = append(taken, textBox(t))
	}
	dropped := 0
	for _, a := range arrows {
		send := recs[a.send]
		m := send.Msg
		c, marker := arrowStyle(classes[m.Type])
		x1, y1 := col[send.Node], rowY(rowOf[a.send])
		x2, ok := col[a.to]
		if !ok || x1 == x2 {
			continue
		}
		title := fmt.Sprintf("%s %d → %d epoch %d", m.Type, m.From, a.to, m.Epoch)
		if m.Candidate != 0 {
			title += fmt.Sprintf(" candidate %d", m.Candidate)
		}
		title += "\nsent " + offset(tl, send.Time)
		var y2 float64
		dash := ""
		if a.recv >= 0 {
			y2 = rowY(rowOf[a.recv])
			title += ", received " + offset(tl, recs[a.recv].Time)
		} else {
			// Never received: draw it two thirds of the way and cross it.
			x2 = x1 + (x2-x1)*0.66
			y2 = y1 + rowH*0.5
			dash, marker = "3,2", ""
			title += ", never received"
			cross := svgText{X: x2, Y: y2 + 4, Text: "×", Anchor: "middle", Fill: killColour, Size: 13, Bold: true, Title: title}
			p.Texts = append(p.Texts, cross)
			taken = append(taken, textBox(cross))
		}
		p.Lines = append(p.Lines, svgLine{X1: x1, Y1: y1, X2: x2, Y2: y2, Stroke: c, W: 1.2, Dash: dash, Marker: marker, Title: title})
		placed := false
		for _, f := range []float64{0.5, 0.35, 0.65, 0.22, 0.78} {
			t := svgText{X: x1 + (x2-x1)*f, Y: y1 + (y2-y1)*f - 3, Text: strings.ToUpper(m.Type), Anchor: "middle", Fill: c, Size: 9, Halo: true, Title: title}
			b := textBox(t)
			if slices.ContainsFunc(taken, b.overlaps) {
				continue
			}
			p.Texts = append(p.Texts, t)
			taken = append(taken, b)
			placed = true
			break
		}
		if !placed {
			dropped++
		}
	}
	if dropped > 0 {
		if note != "" {
			note += " "
		}
		note += fmt.Sprintf("%d of %d arrows are unlabelled where a label would have covered another; hover them for the type.", dropped, len(arrows))
	}
	return p, note
}

// box is a label's extent on the page.
type box struct{ x1, y1, x2, y2 float64 }

func (b box) overlaps(o box) bool {
	return b.x1 < o.x2 && o.x1 < b.x2 && b.y1 < o.y2 && o.y1 < b.y2
}

// textBox is the extent of t, a little generous.
func textBox(t svgText) box {
	w := textWidth(t.Text, t.Size)
	x := t.X
	switch t.Anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	return box{x, t.Y - t.Size, x + w, t.Y + 2}
}
