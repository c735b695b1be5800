package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// templatePlot is how the page template drew a plot before svgPlot.SVG:
// the reference its markup must equal.
const templatePlot = `{{define "plot"}}<svg width="{{f .W}}" height="{{f .H}}" viewBox="0 0 {{f .W}} {{f .H}}" role="img">
{{range .Rects}}<rect x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" fill="{{.Fill}}"{{if .Stroke}} stroke="{{.Stroke}}" stroke-width="{{f .StrokeW}}"{{end}}{{if .Dash}} stroke-dasharray="{{.Dash}}"{{end}}{{if .Opacity}} fill-opacity="{{f .Opacity}}"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}</rect>
{{end}}{{range .Lines}}<line x1="{{f .X1}}" y1="{{f .Y1}}" x2="{{f .X2}}" y2="{{f .Y2}}" stroke="{{.Stroke}}" stroke-width="{{f .W}}"{{if .Dash}} stroke-dasharray="{{.Dash}}"{{end}}{{if .Marker}} marker-end="url(#{{.Marker}})"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}</line>
{{end}}{{range .Dots}}<circle cx="{{f .X}}" cy="{{f .Y}}" r="{{f .R}}" fill="{{.Fill}}"{{if .Stroke}} stroke="{{.Stroke}}"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}</circle>
{{end}}{{range .Texts}}<text x="{{f .X}}" y="{{f .Y}}"{{if .Halo}} class="halo"{{end}}{{if .Anchor}} text-anchor="{{.Anchor}}"{{end}} fill="{{.Fill}}" font-size="{{f .Size}}"{{if .Bold}} font-weight="600"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}{{.Text}}</text>
{{end}}</svg>{{end}}<div class="plot">{{template "plot" .}}</div>`

var referencePlot = template.Must(template.New("reference").Funcs(template.FuncMap{
	"f": func(x float64) string { return fmt.Sprintf("%.1f", x) },
}).Parse(templatePlot))

// hostilePlot holds every value the escaping must get right: markup,
// quotes, +, NUL, bytes that are not UTF-8, numbers that are not finite.
func hostilePlot() *svgPlot {
	hostile := "</title><script>alert('x\"1')</script> & +1\x00 \xff\xfe ünï"
	return &svgPlot{W: math.Inf(1), H: -0.04,
		Rects: []svgRect{
			{X: 1.25, Y: 2.35, W: math.NaN(), H: 1e21, Fill: hostile, Stroke: hostile, StrokeW: -1.05, Dash: hostile, Opacity: math.NaN(), Title: hostile},
			{X: -0.0, Fill: "url(#rl-hatch)"},
		},
		Lines: []svgLine{{X1: 1, Y1: 2, X2: 3, Y2: 4.45, Stroke: hostile, W: 1.5, Dash: "3,2", Marker: hostile, Title: hostile}, {}},
		Dots:  []svgDot{{X: 5, Y: 6, R: 3, Fill: hostile, Stroke: hostile, Title: hostile}, {}},
		Texts: []svgText{{X: 7, Y: 8, Text: hostile, Anchor: hostile, Fill: hostile, Size: 12, Bold: true, Halo: true, Title: hostile}, {Text: "node 5"}},
	}
}

// TestPlotMarkupIsWhatTheTemplateWrote holds svgPlot.SVG to the markup the
// page template wrote for the same plot, byte for byte: for every plot
// the report tests' runs draw, and for one full of hostile values.
func TestPlotMarkupIsWhatTheTemplateWrote(t *testing.T) {
	plots := map[string]*svgPlot{"hostile": hostilePlot(), "empty": {}}
	members := []election.NodeID{1, 2, 3, 4, 5}
	for name, r := range map[string]Report{
		"split brain": baseReport(),
		"paused":      {Records: pausedRun(), Members: members, Algorithm: "test", ElectionTypes: []string{"ELECTION"}, AnnounceTypes: []string{"COORDINATOR"}},
		"long boot":   {Records: longBoot(), Members: members},
		"hostile": {Records: append(splitBrainRun(), msg(300, history.KindSend, 1, 1, 2, `<b>"+'&`),
			fault(200, "kill", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{2}, Target: `<i>'"+&`})), Members: members},
	} {
		p, err := build(r)
		if err != nil {
			t.Fatalf("%s: build: %v", name, err)
		}
		plots[name+" timeline"], plots[name+" whole run"], plots[name+" sequence"] = p.Timeline, p.WholeRun, p.Sequence
	}
	page := template.Must(template.New("page").Parse(`<div class="plot">{{.SVG}}</div>`))
	drawn := 0
	for name, p := range plots {
		if p == nil {
			continue
		}
		var want strings.Builder
		if err := referencePlot.Execute(&want, p); err != nil {
			t.Fatalf("%s: reference template: %v", name, err)
		}
		var got strings.Builder
		if err := page.Execute(&got, p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.String() != want.String() {
			g, w := got.String(), want.String()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("%s: markup differs from the template's at byte %d:\n got …%q…\nwant …%q…", name, i, g[max(i-40, 0):min(i+60, len(g))], w[max(i-40, 0):min(i+60, len(w))])
		}
		drawn += len(p.Rects) + len(p.Lines) + len(p.Dots) + len(p.Texts)
	}
	if drawn < 100 {
		t.Fatalf("only %d shapes compared: the fixtures no longer draw what this test is for", drawn)
	}
}
