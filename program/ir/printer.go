package ir

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Print writes the program as deterministic text: one block per function,
// one line per instruction, nested blocks indented. Values print as %ID or
// %name.ID; each op line ends with the type of what it writes.
func Print(w io.Writer, p *Program) error {
	var b strings.Builder
	for i, f := range p.Funcs {
		if i > 0 {
			b.WriteString("\n")
		}
		printFunc(&b, f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String returns the printed program.
func (p *Program) String() string {
	var b strings.Builder
	_ = Print(&b, p)
	return b.String()
}

func printFunc(b *strings.Builder, f *Func) {
	sig := func(vs []*Value) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.Ref() + " " + v.Type.String()
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(b, "func %s(%s) (%s) { // %s\n", f.Name, sig(f.Params), sig(f.Results), f.Pos)
	printBody(b, f.Body, 1)
	b.WriteString("}\n")
}

// Ref returns how the printer names the value: %ID, or %name.ID.
func (v *Value) Ref() string {
	if v.Name == "" {
		return "%" + strconv.Itoa(v.ID)
	}
	return "%" + v.Name + "." + strconv.Itoa(v.ID)
}

func printBody(b *strings.Builder, body []Instr, depth int) {
	ind := strings.Repeat("\t", depth)
	for _, in := range body {
		switch in := in.(type) {
		case *Op:
			b.WriteString(ind + in.String() + "\n")
		case *For:
			idx := "_"
			if in.Index != nil {
				idx = in.Index.Ref()
			}
			fmt.Fprintf(b, "%sfor %s = range %s { // %s\n", ind, idx, in.Count.Ref(), in.Pos)
			printBody(b, in.Body, depth+1)
			b.WriteString(ind + "}\n")
		case *If:
			fmt.Fprintf(b, "%sif %s { // %s\n", ind, in.Cond.Ref(), in.Pos)
			printBody(b, in.Then, depth+1)
			if len(in.Else) > 0 {
				b.WriteString(ind + "} else {\n")
				printBody(b, in.Else, depth+1)
			}
			b.WriteString(ind + "}\n")
		}
	}
}

// String prints one op: "%dst = kind args attrs : type".
func (o *Op) String() string {
	var b strings.Builder
	b.WriteString(o.Dst.Ref() + " = " + o.Kind.String())
	for i, a := range o.Args {
		if i == 0 {
			b.WriteString(" ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(a.Ref())
	}
	switch o.Kind {
	case ConstF:
		b.WriteString(" " + strconv.FormatFloat(o.F, 'g', -1, 64))
	case ConstI:
		b.WriteString(" " + strconv.FormatInt(o.I, 10))
	case Softmax, LogSoftmax:
		fmt.Fprintf(&b, " axis=%d", o.Axis)
	case Argmax:
		fmt.Fprintf(&b, " axis=%d", o.Axis)
		if o.KeepDims {
			b.WriteString(" keepdims=true")
		}
	case Sum, Mean, Max:
		fmt.Fprintf(&b, " axis=%d keepdims=%t", o.Axis, o.KeepDims)
	}
	if o.Site != nil {
		fmt.Fprintf(&b, " @%s", o.Site.Pos)
	}
	b.WriteString(" : " + o.Dst.Type.String())
	return b.String()
}
