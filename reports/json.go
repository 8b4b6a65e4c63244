package reports

import (
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
func WriteJSON(w io.Writer, r *Report) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	c := *r
	if c.Schema == "" {
		c.Schema = Schema
	}
	if c.Schema != Schema {
		return fmt.Errorf("reports: %w %q (this version writes %q)", ErrSchema, c.Schema, Schema)
	}
	b, err := marshalIndent(&c)
	if err != nil {
		return fmt.Errorf("reports: encoding JSON: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("reports: writing JSON: %w", err)
	}
	return nil
}

// marshalIndent encodes v as indented JSON ending in a newline, leaving
// <, > and & as they are: a report is read by people and tools, never
// pasted into HTML, and "x < 0" reads better than "x \u003c 0".
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadJSON reads a report written by WriteJSON. A report whose "schema" is
// missing or is not Schema is rejected with an error wrapping ErrSchema
// that names both versions. Unknown fields are ignored: fields added within
// v1 are compatible, anything else needs a new schema version.
func ReadJSON(r io.Reader) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reports: reading JSON: %w", err)
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("reports: decoding JSON: %w", err)
	}
	switch {
	case head.Schema == nil:
		return nil, fmt.Errorf("reports: %w: the report has no \"schema\" field (want %q)", ErrSchema, Schema)
	case *head.Schema != Schema:
		return nil, fmt.Errorf("reports: %w %q: this version of rxeq reads %q", ErrSchema, *head.Schema, Schema)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("reports: decoding %s: %w", Schema, err)
	}
	return &rep, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
