package report

import (
	"html/template"
	"strconv"
	"strings"
)

// SVG is the plot as SVG markup, for the page template to place as it is.
//
// It is written here rather than by a range in the template: a run's plot
// has thousands of shapes, and html/template's reflection and its escaping
// of every value one call at a time made the page most of the CPU a
// simulated run spent (docs/performance.md, "The test suite"). Every value
// is escaped as html/template escapes it in these places, byte for byte
// (TestPlotMarkupIsWhatTheTemplateWrote).
func (p *svgPlot) SVG() template.HTML {
	if p == nil {
		return ""
	}
	var b strings.Builder
	b.Grow(256 + 160*(len(p.Rects)+len(p.Lines)+len(p.Dots)+len(p.Texts)))
	w := svgWriter{&b}
	w.s(`<svg width="`).f(p.W).s(`" height="`).f(p.H).s(`" viewBox="0 0 `).f(p.W).s(" ").f(p.H).s(`" role="img">` + "\n")
	for i := range p.Rects {
		r := &p.Rects[i]
		w.s(`<rect x="`).f(r.X).s(`" y="`).f(r.Y).s(`" width="`).f(r.W).s(`" height="`).f(r.H).s(`" fill="`).e(r.Fill).s(`"`)
		if r.Stroke != "" {
			w.s(` stroke="`).e(r.Stroke).s(`" stroke-width="`).f(r.StrokeW).s(`"`)
		}
		if r.Dash != "" {
			w.s(` stroke-dasharray="`).e(r.Dash).s(`"`)
		}
		if r.Opacity != 0 {
			w.s(` fill-opacity="`).f(r.Opacity).s(`"`)
		}
		w.s(">").title(r.Title).s("</rect>\n")
	}
	for i := range p.Lines {
		l := &p.Lines[i]
		w.s(`<line x1="`).f(l.X1).s(`" y1="`).f(l.Y1).s(`" x2="`).f(l.X2).s(`" y2="`).f(l.Y2).s(`" stroke="`).e(l.Stroke).s(`" stroke-width="`).f(l.W).s(`"`)
		if l.Dash != "" {
			w.s(` stroke-dasharray="`).e(l.Dash).s(`"`)
		}
		if l.Marker != "" {
			w.s(` marker-end="url(#`).e(l.Marker).s(`)"`)
		}
		w.s(">").title(l.Title).s("</line>\n")
	}
	for i := range p.Dots {
		d := &p.Dots[i]
		w.s(`<circle cx="`).f(d.X).s(`" cy="`).f(d.Y).s(`" r="`).f(d.R).s(`" fill="`).e(d.Fill).s(`"`)
		if d.Stroke != "" {
			w.s(` stroke="`).e(d.Stroke).s(`"`)
		}
		w.s(">").title(d.Title).s("</circle>\n")
	}
	for i := range p.Texts {
		t := &p.Texts[i]
		w.s(`<text x="`).f(t.X).s(`" y="`).f(t.Y).s(`"`)
		if t.Halo {
			w.s(` class="halo"`)
		}
		if t.Anchor != "" {
			w.s(` text-anchor="`).e(t.Anchor).s(`"`)
		}
		w.s(` fill="`).e(t.Fill).s(`" font-size="`).f(t.Size).s(`"`)
		if t.Bold {
			w.s(` font-weight="600"`)
		}
		w.s(">").title(t.Title).e(t.Text).s("</text>\n")
	}
	w.s("</svg>")
	return template.HTML(b.String())
}

// svgWriter appends markup: s as it is, f a number as the page writes
// numbers (one decimal), e text escaped.
type svgWriter struct{ b *strings.Builder }

func (w svgWriter) s(text string) svgWriter {
	w.b.WriteString(text)
	return w
}

func (w svgWriter) f(x float64) svgWriter {
	var buf [32]byte
	return w.e(string(strconv.AppendFloat(buf[:0], x, 'f', 1, 64)))
}

func (w svgWriter) title(t string) svgWriter {
	if t != "" {
		w.s("<title>").e(t).s("</title>")
	}
	return w
}

// e writes text escaped as html/template escapes a value in element
// content and in a quoted attribute: NUL becomes U+FFFD, and " & ' + < >
// become character references.
func (w svgWriter) e(text string) svgWriter {
	start := 0
	for i := 0; i < len(text); i++ {
		var repl string
		switch text[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		w.b.WriteString(text[start:i])
		w.b.WriteString(repl)
		start = i + 1
	}
	w.b.WriteString(text[start:])
	return w
}
