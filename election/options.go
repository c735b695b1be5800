package election

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OptionKind is the type of an algorithm option's value.
type OptionKind string

const (
	OptionBool     OptionKind = "bool"     // true or false (also 1/0, t/f)
	OptionInt      OptionKind = "int"      // a decimal integer
	OptionDuration OptionKind = "duration" // a Go duration: 300ms, 1.5s
	OptionString   OptionKind = "string"   // any text without ',' or '='
)

// OptionSpec declares one option an algorithm takes.
type OptionSpec struct {
	// Name is the key in scenario files (cluster: {options: {NAME: …}}),
	// in --option NAME=VALUE and in OPTIONS="NAME=VALUE,…".
	Name    string
	Kind    OptionKind
	Default string // in the kind's text form
	Help    string
}

// Parse checks v against the option's kind and returns its canonical text
// (true/false, a decimal, a duration as time.Duration writes it), so two
// spellings of one value record alike.
func (o OptionSpec) Parse(v string) (string, error) {
	switch o.Kind {
	case OptionBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", fmt.Errorf("%q is not a bool (want true or false)", v)
		}
		return strconv.FormatBool(b), nil
	case OptionInt:
		i, err := strconv.Atoi(v)
		if err != nil {
			return "", fmt.Errorf("%q is not an int", v)
		}
		return strconv.Itoa(i), nil
	case OptionDuration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return "", fmt.Errorf("%q is not a duration (want e.g. 300ms or 1.5s)", v)
		}
		return d.String(), nil
	case OptionString:
		if strings.ContainsAny(v, ",=") {
			return "", fmt.Errorf("%q holds ',' or '=', which OPTIONS lists cannot carry", v)
		}
		return v, nil
	}
	return "", fmt.Errorf("option %s has unknown kind %q", o.Name, o.Kind)
}

// check reports a declaration that cannot work.
func (o OptionSpec) check() error {
	if o.Name == "" || strings.ContainsAny(o.Name, ",= \t") {
		return fmt.Errorf("option name %q: want a word without ',', '=' or spaces", o.Name)
	}
	if _, err := o.Parse(o.Default); err != nil {
		return fmt.Errorf("option %s: default %w", o.Name, err)
	}
	return nil
}

// Options are an algorithm's option values by name, in text. Given by a
// person they may be partial and in any spelling; resolved
// (Algorithm.ResolveOptions) they hold every declared option in canonical
// text, and the typed getters below read them. A getter for an option the
// algorithm does not declare, or whose value is not of its kind, returns
// the zero value: New receives only resolved options, so that cannot
// happen there.
type Options map[string]string

// Bool, Int, Duration and Text read a resolved option.
func (o Options) Bool(name string) bool {
	b, _ := strconv.ParseBool(o[name])
	return b
}

func (o Options) Int(name string) int {
	i, _ := strconv.Atoi(o[name])
	return i
}

func (o Options) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(o[name])
	return d
}

func (o Options) Text(name string) string { return o[name] }

// String writes the options as OPTIONS and --option lists read them:
// "k=v,k=v", sorted by name; "" for none.
func (o Options) String() string {
	names := make([]string, 0, len(o))
	for k := range o {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + o[k]
	}
	return strings.Join(parts, ",")
}

// ParseOptions reads "k=v,k=v" (the OPTIONS environment variable, and
// each --option flag, which may hold one pair or several). It checks the
// shape only; Algorithm.ResolveOptions checks names and values.
func ParseOptions(s string) (Options, error) {
	out := Options{}
	if err := out.Add(s); err != nil {
		return nil, err
	}
	return out, nil
}

// Add reads "k=v[,k=v…]" into o; a name given twice is an error.
func (o Options) Add(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("option %q: want NAME=VALUE", pair)
		}
		if _, dup := o[k]; dup {
			return fmt.Errorf("option %s given twice", k)
		}
		o[k] = strings.TrimSpace(v)
	}
	return nil
}

// Set makes a non-nil Options a repeatable flag.Value (--option k=v).
func (o Options) Set(s string) error { return o.Add(s) }

// Option finds the declaration of an option; the error names the
// algorithm and the options it takes.
func (a Algorithm) Option(name string) (OptionSpec, error) {
	for _, o := range a.Options {
		if o.Name == name {
			return o, nil
		}
	}
	return OptionSpec{}, fmt.Errorf("algorithm %s has no option %q (%s)", a.Name, name, a.optionNames())
}

// ParseOption checks one given option: its name against the algorithm's
// declarations, its value against its kind. It returns the canonical text.
func (a Algorithm) ParseOption(name, value string) (string, error) {
	o, err := a.Option(name)
	if err != nil {
		return "", err
	}
	v, err := o.Parse(value)
	if err != nil {
		return "", fmt.Errorf("algorithm %s option %s (%s): %w", a.Name, name, o.Kind, err)
	}
	return v, nil
}

// ResolveOptions checks the given options and fills the defaults of the
// others: the result holds every declared option in canonical text (nil
// for an algorithm without options). It is idempotent.
func (a Algorithm) ResolveOptions(given Options) (Options, error) {
	names := make([]string, 0, len(given))
	for k := range given {
		names = append(names, k)
	}
	slices.Sort(names) // the first error is the same every time
	out := make(Options, len(a.Options))
	for _, k := range names {
		v, err := a.ParseOption(k, given[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	for _, o := range a.Options {
		if _, ok := out[o.Name]; !ok {
			out[o.Name] = o.Default
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// optionNames lists the options for an error: "options: a, b" or "it takes
// none".
func (a Algorithm) optionNames() string {
	if len(a.Options) == 0 {
		return "it takes none"
	}
	names := make([]string, len(a.Options))
	for i, o := range a.Options {
		names[i] = o.Name
	}
	return "options: " + strings.Join(names, ", ")
}
