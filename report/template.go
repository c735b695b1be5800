package report

// pageTemplate is the whole page. It loads nothing: styles and drawings are
// inline, tooltips are SVG <title> elements.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — ringleader report</title>
<style>
:root { --pass: #2e7d32; --fail: #c62828; --ink: #212121; --muted: #616161; --rule: #e0e0e0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0; background: #fff; }
main { max-width: 1260px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
.meta { color: var(--muted); margin: 0 0 6px; }
.meta b { color: var(--ink); font-weight: 600; }
.meta span { margin-right: 16px; white-space: nowrap; }
.overall { display: inline-block; padding: 2px 10px; border-radius: 10px; color: #fff; font-weight: 600; font-size: 13px; }
.overall.pass, .badge.pass { background: var(--pass); }
.overall.fail, .badge.fail { background: var(--fail); }
.badge.expected { background: #6d4c41; }
.badge { white-space: nowrap; display: inline-block; min-width: 44px; text-align: center; padding: 1px 8px; border-radius: 9px; color: #fff; font-weight: 600; font-size: 12px; }
table { border-collapse: collapse; margin: 4px 0 8px; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid var(--rule); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.fail td { background: #fff6f6; }
details summary { cursor: pointer; color: var(--muted); font-size: 12px; }
pre { background: #fafafa; border: 1px solid var(--rule); padding: 8px; max-height: 360px; overflow: auto; font-size: 12px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 6px 0 10px; font-size: 12px; color: #424242; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.plot svg { display: block; max-width: 100%; height: auto; }
.seq { border-top: 1px solid var(--rule); }
details.whole { margin: 4px 0 10px; }
details.whole > summary { font-size: 13px; }
.steps td.n { text-align: right; }
.mark { display: inline-block; min-width: 18px; height: 18px; line-height: 18px; border-radius: 9px; color: #fff; font-size: 11px; font-weight: 700; text-align: center; padding: 0 4px; }
.mark.step { background: #616161; } .mark.pass { background: var(--pass); } .mark.fail { background: var(--fail); }
.note { color: var(--muted); font-style: italic; }
.notes li { color: var(--muted); }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg text.halo { paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
/* On paper: colours kept (the lanes mean nothing without them), the page's
   width, no hover hints, figures and tables not split across pages. */
@media print {
  @page { size: A4 landscape; margin: 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  .plot, .legend, tr { break-inside: avoid; page-break-inside: avoid; }
  .hint, details.whole, details > summary { display: none; }
  pre { max-height: none; overflow: visible; }
}
</style>
</head>
<body>
<svg width="0" height="0" style="position:absolute" aria-hidden="true">
<defs>
<pattern id="rl-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
<rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9e9e9e" stroke-width="2"/>
</pattern>
<pattern id="rl-paused" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">
<line x1="1.5" y1="0" x2="1.5" y2="6" stroke="#ffffff" stroke-width="2" stroke-opacity="0.85"/><line x1="4" y1="0" x2="4" y2="6" stroke="#283593" stroke-width="1" stroke-opacity="0.7"/>
</pattern>
<marker id="rl-arrow-election" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1565c0"/></marker>
<marker id="rl-arrow-announce" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#2e7d32"/></marker>
<marker id="rl-arrow-other" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#9e9e9e"/></marker>
</defs>
</svg>
<main>
<h1>{{.Title}}</h1>
<p class="meta">
{{if .Scenario}}<span>scenario <b>{{.Scenario}}</b></span>{{end}}
{{if .Backend}}<span>backend <b>{{.Backend}}</b></span>{{end}}
{{if .Algorithm}}<span>algorithm <b>{{.Algorithm}}</b></span>{{end}}
<span>quorum <b>{{.Quorum}}</b></span>
{{if .Options}}<span>options <b>{{.Options}}</b></span>{{end}}
<span>n <b>{{.N}}</b> ({{.Members}})</span>
{{if .Seed}}<span>seed <b>{{.Seed}}</b></span>{{end}}
{{if .Date}}<span>date <b>{{.Date}}</b></span>{{end}}
<span>span <b>{{.Span}}</b></span>
<span>records <b>{{.Records}}</b></span>
</p>
{{if .RunVerdict}}<p>{{if eq .RunVerdict "passed"}}<span class="overall pass">run passed</span>{{else}}<span class="overall fail">run failed</span>{{end}}</p>
{{else if .Verdicts}}<p>{{if .AllPass}}<span class="overall pass">all checks pass</span>{{else}}<span class="overall fail">checks failed</span>{{end}}</p>{{end}}
{{if .Notes}}<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2>Verdicts</h2>
{{if .Verdicts}}
<table class="verdicts">
<thead><tr><th>checker</th><th>result</th><th>summary</th></tr></thead>
<tbody>
{{range .Verdicts}}<tr class="{{if .Pass}}pass{{else}}fail{{end}}" data-checker="{{.Checker}}">
<td><b>{{.Checker}}</b></td>
<td>{{if .Pass}}<span class="badge pass">pass</span>{{else if .Expected}}<span class="badge expected" title="the scenario expects this checker to fail">fail (expected)</span>{{else}}<span class="badge fail">fail</span>{{end}}</td>
<td>{{.Summary}}{{if .Evidence}}<details><summary>evidence</summary><pre>{{.Evidence}}</pre></details>{{end}}</td>
</tr>
{{end}}</tbody>
</table>
{{else}}<p class="note">No checkers were run.</p>{{end}}

<h2>Timeline</h2>
<div class="legend">
{{range .Legend}}<span>{{template "swatch" .}}{{.Label}}</span>
{{end}}</div>
<div class="plot">{{.Timeline.SVG}}</div>
{{with .WholeRun}}<details class="whole"><summary>The timeline opens where the cluster first settled, {{$.Boot}} after its start; the boot is squeezed into the strip on the left. Show the whole run to scale</summary>
<div class="plot">{{.SVG}}</div></details>{{end}}
<p class="note">Every time on this page is milliseconds from the first record. <span class="hint">Hover over a bar, a fault or a marker for its exact times.</span></p>

{{if .Steps}}
<h3>Steps</h3>
<table class="steps">
<thead><tr><th class="num">#</th><th class="num">at</th><th>step</th><th>result</th><th>detail</th></tr></thead>
<tbody>
{{range .Steps}}<tr class="{{if not .Expect}}step{{else if .Pass}}pass{{else}}fail{{end}}"><td class="n"><span class="mark {{if not .Expect}}step{{else if .Pass}}pass{{else}}fail{{end}}">{{.Number}}</span></td><td class="num">{{.Offset}}</td><td>{{.Name}}</td><td>{{if .Expect}}{{if .Pass}}<span class="badge pass">pass</span>{{else}}<span class="badge fail">fail</span>{{end}}{{end}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody>
</table>
<p class="note">A step's row and marker are at the instant it began; a step that expects something (or waits for the cluster to be stable) is at the instant that held or failed, green or red.</p>
{{end}}

<h2>Failover</h2>
{{if .Failovers}}
{{with .FailoverStats}}<p>{{.N}} recovered{{if .Unrecovered}}, {{.Unrecovered}} not recovered{{end}}{{if .N}} — p50 <b>{{ms .P50}}</b>, p95 <b>{{ms .P95}}</b>, max <b>{{ms .Max}}</b>{{end}}</p>{{end}}
<table>
<thead><tr><th>fault</th><th>at</th><th class="num">old leader</th><th>new leader</th><th class="num">failover</th><th>note</th></tr></thead>
<tbody>
{{range .Failovers}}<tr class="{{if .Recovered}}pass{{else}}fail{{end}}"><td>{{.Label}}</td><td class="num">{{.From}}</td><td class="num">{{.Leader}}</td><td>{{.NewLeader}}</td><td class="num">{{.Duration}}</td><td>{{.Note}}</td></tr>
{{end}}</tbody>
</table>
<p class="note">A failover is a fault that took the leader away from a majority (a kill, stop or pause of it, or a partition that left it in a minority). It runs from the fault taking effect to the first instant the cluster is settled again: every group of nodes that can all talk agrees on a live leader of its own, or, with a quorum, a minority views none.</p>
{{else}}<p class="note">No fault took the leader away from a majority in this run.</p>{{end}}

<h2>Messages</h2>
{{if .Counts}}
<table>
<thead><tr><th>type</th><th>class</th><th class="num">sent</th><th class="num">received</th></tr></thead>
<tbody>
{{range .Counts}}<tr><td>{{.Type}}</td><td>{{.Class}}</td><td class="num">{{.Sent}}</td><td class="num">{{.Received}}</td></tr>
{{end}}<tr><td><b>total</b></td><td></td><td class="num"><b>{{.CountTotal.Sent}}</b></td><td class="num"><b>{{.CountTotal.Received}}</b></td></tr>
</tbody>
</table>
{{else}}<p class="note">The history records no messages.</p>{{end}}
{{if .Elections}}
<h3>Elections</h3>
<table>
<thead><tr><th>from</th><th>settled</th><th>took</th><th>leader</th><th class="num">election msgs</th><th class="num">announce msgs</th><th>by type</th></tr></thead>
<tbody>
{{range .Elections}}<tr class="election"><td class="num">{{.Offset}}</td><td class="num">{{if .Unfinished}}never{{else}}{{.Agreed}}{{end}}</td><td class="num">{{.Took}}</td><td>{{.Leaders}}</td><td class="num">{{.Election}}</td><td class="num">{{.Announce}}</td><td>{{.Types}}</td></tr>
{{end}}</tbody>
</table>
<p class="note">An election runs from the moment the cluster stopped being settled to the moment it settled again, whether or not it sent election messages (after a heal a side may simply adopt the leader it hears again); messages sent while settled count for the election that just ended.</p>
{{end}}

<h2>Message sequence</h2>
{{if .SequenceNote}}<p class="note">{{.SequenceNote}}</p>{{end}}
{{with .Sequence}}<div class="plot seq">{{.SVG}}</div>
<p class="note">Time flows down; each send, receive and fault has a row of its own, in time order (rows are not to scale; the left column gives the offset wherever it changes). Blue: election messages, green: announcements, grey: everything else; a dashed arrow ending in × was never received. The bar on each node's line is the leader it believes in, outlined while it believes it leads, hatched while down, striped while paused; the faults are the horizontal rules.</p>{{end}}
</main>
</body>
</html>
{{define "swatch"}}<svg width="22" height="14" aria-hidden="true">{{if eq .Kind "swatch"}}<rect x="1" y="1" width="20" height="12" fill="{{.Fill}}"/>{{else if eq .Kind "leader"}}<rect x="2" y="2" width="18" height="10" fill="#ffffff" stroke="{{.Stroke}}" stroke-width="2"/>{{else if eq .Kind "candidate"}}<rect x="1" y="1" width="20" height="12" fill="{{.Fill}}" stroke="#616161" stroke-dasharray="3,2"/><text x="11" y="11" text-anchor="middle" font-size="10" fill="#222">?</text>{{else if eq .Kind "strip"}}<rect x="1" y="3" width="20" height="8" fill="{{.Fill}}" fill-opacity="0.75"/>{{else if eq .Kind "stale"}}<rect x="1" y="3" width="20" height="8" fill="{{.Fill}}" fill-opacity="0.25"/>{{else if eq .Kind "checkpoint"}}<line x1="11" y1="0" x2="11" y2="9" stroke="{{.Stroke}}" stroke-dasharray="1,2"/><circle cx="11" cy="10" r="3" fill="{{.Stroke}}"/>{{else if eq .Kind "marker"}}<circle cx="11" cy="7" r="6" fill="{{.Fill}}"/>{{else if eq .Kind "fold"}}<rect x="1" y="1" width="8" height="12" fill="#d4d4d4"/><line x1="10" y1="13" x2="12" y2="1" stroke="#616161"/><rect x="13" y="1" width="8" height="12" fill="#d4d4d4"/>{{else if eq .Kind "hatch"}}<rect x="1" y="1" width="20" height="12" fill="url(#rl-hatch)" stroke="#bdbdbd"/>{{else if eq .Kind "paused"}}<rect x="1" y="1" width="20" height="12" fill="url(#rl-paused)" stroke="#283593" stroke-dasharray="3,2"/>{{else if eq .Kind "band"}}<rect x="1" y="1" width="20" height="12" fill="{{.Fill}}" fill-opacity="0.18"/>{{else if eq .Kind "line"}}<line x1="11" y1="0" x2="11" y2="14" stroke="{{.Stroke}}" stroke-width="2"/>{{else if eq .Kind "dash"}}<line x1="11" y1="0" x2="11" y2="14" stroke="{{.Stroke}}" stroke-width="2" stroke-dasharray="4,3"/>{{end}}</svg>{{end}}
`
