package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ErrSchema is the kind of the error ReadJSON returns for a report of
// another format or version.
var ErrSchema = errors.New("unsupported report schema")

// Number is a float64 that survives JSON even when it is not finite: NaN
// and ±Inf are written as the strings "NaN", "+Inf" and "-Inf" (JSON has no
// such numbers), every finite value as the shortest number that reads back
// to the same float64.
type Number float64

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*n = Number(math.NaN())
		return nil
	case `"+Inf"`, `"Inf"`:
		*n = Number(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = Number(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("number: %w", err)
	}
	*n = Number(f)
	return nil
}

// WriteJSON writes r as indented JSON. An empty Schema is filled in; any
// other value than Schema is refused, so a report always says what it is.
//
// It streams: the cases and locks are encoded one at a time, so writing
// a report costs about one case's encoding on top of the report itself
// (`rxeq merge` of a gigabyte of shards does not hold a second copy).
func WriteJSON(w io.Writer, r *Report) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	return writeJSON(w, r, []jsonList{
		{"cases", r.Cases == nil, func(yield func(any) error) error {
			for i := range r.Cases {
				if err := yield(&r.Cases[i]); err != nil {
					return err
				}
			}
			return nil
		}},
		{"locks", r.Locks == nil, func(yield func(any) error) error {
			for i := range r.Locks {
				if err := yield(&r.Locks[i]); err != nil {
					return err
				}
			}
			return nil
		}},
	})
}

// jsonList is a list field of a report that writeJSON writes one element
// at a time: each calls yield with every element, in order, and returns
// the first error, yield's or its own. A nil list (isNil) is written as
// null.
type jsonList struct {
	key   string
	isNil bool
	each  func(yield func(any) error) error
}

// writeJSON writes the report r as WriteJSON does, but with the lists
// (cases, then locks) from lists instead of r's.
func writeJSON(w io.Writer, r *Report, lists []jsonList) error {
	c := *r
	if c.Schema == "" {
		c.Schema = Schema
	}
	if c.Schema != Schema {
		return fmt.Errorf("reports: %w %q (this version writes %q)", ErrSchema, c.Schema, Schema)
	}
	// The report without its cases and locks, whose places are marked by
	// null and filled in one element at a time.
	c.Cases, c.Locks = nil, nil
	head, err := marshalIndent(&c, "")
	if err != nil {
		return fmt.Errorf("reports: encoding JSON: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	rest := head
	for _, list := range lists {
		mark := []byte("\n  \"" + list.key + "\": null")
		at := bytes.Index(rest, mark)
		if at < 0 {
			return fmt.Errorf("reports: encoding JSON: no %q field", list.key)
		}
		bw.Write(rest[:at+len(mark)-len("null")])
		rest = rest[at+len(mark):]
		if list.isNil {
			bw.WriteString("null")
			continue
		}
		n := 0
		err := list.each(func(v any) error {
			b, err := marshalIndent(v, "    ")
			if err != nil {
				return fmt.Errorf("reports: encoding JSON: %w", err)
			}
			if n == 0 {
				bw.WriteString("[")
			} else {
				bw.WriteString(",")
			}
			n++
			bw.WriteString("\n    ")
			_, err = bw.Write(bytes.TrimSuffix(b, []byte("\n")))
			if err != nil {
				return fmt.Errorf("reports: writing JSON: %w", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n == 0 {
			bw.WriteString("[]")
		} else {
			bw.WriteString("\n  ]")
		}
	}
	bw.Write(rest)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("reports: writing JSON: %w", err)
	}
	return nil
}

// marshalIndent encodes v as indented JSON (each line after the first
// headed by prefix) ending in a newline, leaving <, > and & as they are: a
// report is read by people and tools, never pasted into HTML, and "x < 0"
// reads better than "x \u003c 0".
func marshalIndent(v any, prefix string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadJSON reads a report written by WriteJSON. A report whose "schema" is
// missing or is not Schema is rejected with an error wrapping ErrSchema
// that names both versions. Unknown fields are ignored: fields added within
// v1 are compatible, anything else needs a new schema version.
//
// It decodes the stream once, as it comes, without reading it whole
// first: the report in memory is all it costs.
func ReadJSON(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	err := dec.Decode(&rep)
	var syn *json.SyntaxError
	switch {
	case err != nil && (errors.As(err, &syn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return nil, fmt.Errorf("reports: decoding JSON: %w", err)
	case rep.Schema == "":
		// A type error leaves the rest decoded: the schema is checked
		// first, so another version reads as such.
		return nil, fmt.Errorf("reports: %w: the report has no \"schema\" field (want %q)", ErrSchema, Schema)
	case rep.Schema != Schema:
		return nil, fmt.Errorf("reports: %w %q: this version of rxeq reads %q", ErrSchema, rep.Schema, Schema)
	case err != nil:
		return nil, fmt.Errorf("reports: decoding %s: %w", Schema, err)
	}
	return &rep, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
