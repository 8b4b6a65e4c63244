package selftest

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// HostileArg is the hidden subcommand of rxeq that serves ServeHostile
// (`rxeq selftest-executor --misbehave KIND`): the external-executor
// canaries start it as their subprocess.
const HostileArg = "selftest-executor"

// ErrUnknownMisbehaviour is returned by ServeHostile for a kind that is not
// one of Misbehaviours.
var ErrUnknownMisbehaviour = errors.New("unknown misbehaviour")

// Misbehaviours returns the ways the hostile executor can break the
// rxeq.executor/v1 contract, by name, each with what it does. "ok"
// behaves: it is the control that shows the canary program passes
// through the same executor when nothing is broken.
func Misbehaviours() map[string]string {
	return map[string]string{
		"ok":       "behave: run every function with the fallback interpreter and answer correctly",
		"nocrc":    "leave the first input out of input_crc32 (the other inputs' checksums are sent)",
		"wrongcrc": "report a CRC-32 for the first input that is not the one of the bytes it was sent (the input is untouched)",
		"dims":     "return the first float result with its last dimension one larger: the right rank, the wrong dims",
		"dtype":    "return the first float result as float64 (the same values)",
		"mutate":   "write into the first float input, then report the checksum of what the buffer holds after the call",
		"protocol": "answer a run with another id than the request's",
	}
}

// ServeHostile is a deliberately wrong external executor speaking
// rxeq.executor/v1 on in and out (docs/executor-protocol.md): it runs
// every function of the programs it is sent with the fallback interpreter
// and breaks every result the way kind says (see Misbehaviours). It
// returns nil when rxeq closes the stream or sends close.
func ServeHostile(ctx context.Context, in io.Reader, out io.Writer, kind string) error {
	if _, ok := Misbehaviours()[kind]; !ok {
		var names []string
		for k := range Misbehaviours() {
			names = append(names, k)
		}
		slices.Sort(names)
		return fmt.Errorf("%w %q (want one of %s)", ErrUnknownMisbehaviour, kind, strings.Join(names, ", "))
	}
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	if err := writeHostile(w, map[string]any{"type": "hello", "protocol": "rxeq.executor/v1", "name": "rxeq-hostile-" + kind}); err != nil {
		return err
	}
	type prog struct {
		file *program.File
		its  map[string]*fallback.Interpreter
	}
	progs := map[int]*prog{}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var msg struct {
			Type     string `json:"type"`
			ID       uint64 `json:"id"`
			Program  int    `json:"program"`
			File     string `json:"file"`
			Source   string `json:"source"`
			Function string `json:"function"`
		}
		ts, err := readHostile(r, &msg)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch msg.Type {
		case "close":
			return nil
		case "release":
			delete(progs, msg.Program)
			continue
		case "prepare":
			pr, err := func() (*prog, error) {
				f, err := program.Parse(msg.File, []byte(msg.Source))
				if err != nil {
					return nil, err
				}
				p, err := program.Lower(f)
				if err != nil {
					return nil, err
				}
				pr := &prog{file: f, its: map[string]*fallback.Interpreter{}}
				for _, fn := range p.Funcs {
					if pr.its[fn.Name], err = fallback.New(fn); err != nil {
						return nil, err
					}
				}
				return pr, nil
			}()
			if err != nil {
				if err := writeHostile(w, map[string]any{"type": "error", "id": msg.ID, "message": err.Error()}); err != nil {
					return err
				}
				continue
			}
			progs[msg.Program] = pr
			if err := writeHostile(w, map[string]any{"type": "ready", "id": msg.ID}); err != nil {
				return err
			}
			continue
		case "run":
		default:
			return fmt.Errorf("hostile executor: unexpected message %q", msg.Type)
		}
		pr := progs[msg.Program]
		if pr == nil || pr.its[msg.Function] == nil {
			return fmt.Errorf("hostile executor: run of unknown program %d or function %q", msg.Program, msg.Function)
		}
		inputs := map[string]*tensor.Tensor{}
		var names []string
		for _, t := range ts {
			inputs[t.name] = t.t
			names = append(names, t.name)
		}
		outs, runErr := pr.its[msg.Function].Run(ctx, inputs)
		if kind == "mutate" {
			// After the call, so the outputs are right and only the
			// checksum tells.
			for _, t := range ts {
				if t.t.DType == tensor.Float32 && len(t.t.F32) > 0 {
					t.t.F32[0]++
					break
				}
			}
		}
		sums := map[string]uint32{}
		for _, t := range ts {
			sums[t.name] = crc32.ChecksumIEEE(leBytesOf(t.t))
		}
		if len(names) > 0 {
			switch kind {
			case "nocrc":
				delete(sums, names[0])
			case "wrongcrc":
				sums[names[0]] ^= 1
			}
		}
		id := msg.ID
		if kind == "protocol" {
			id += 7
		}
		if runErr != nil {
			reply := map[string]any{"type": "error", "id": id, "message": runErr.Error(), "input_crc32": sums}
			var re *ir.RuntimeError
			if errors.As(runErr, &re) {
				reply["kind"] = re.Kind.Error()
			}
			if err := writeHostile(w, reply); err != nil {
				return err
			}
			continue
		}
		var descs []map[string]any
		var payloads [][]byte
		broken := false
		for _, res := range pr.file.Func(msg.Function).Results {
			t := outs[res.Name]
			if !broken && t.DType == tensor.Float32 && t.Rank() > 0 {
				switch kind {
				case "dims":
					shape := slices.Clone(t.Shape)
					shape[len(shape)-1]++
					t, broken = tensor.NewFloat32(shape...), true
				case "dtype":
					t, broken = tensor.FromFloat64(t.Float64s(), t.Shape...), true
				}
			}
			b := leBytesOf(t)
			shape := append([]int{}, t.Shape...)
			descs = append(descs, map[string]any{"name": res.Name, "dtype": t.DType.String(), "shape": shape, "nbytes": len(b)})
			payloads = append(payloads, b)
		}
		if err := writeHostile(w, map[string]any{"type": "result", "id": id, "tensors": descs, "input_crc32": sums}, payloads...); err != nil {
			return err
		}
	}
}

// hostileTensor is one named tensor of a frame.
type hostileTensor struct {
	name string
	t    *tensor.Tensor
}

// writeHostile writes one frame: the header's length (uint32,
// little-endian), the JSON header, the payloads.
func writeHostile(w *bufio.Writer, header any, payloads ...[]byte) error {
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(h)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, p := range payloads {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return w.Flush()
}

// readHostile reads one frame, decodes its header into v and returns the
// tensors it carries.
func readHostile(r *bufio.Reader, v any) ([]hostileTensor, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	h := make([]byte, binary.LittleEndian.Uint32(n[:]))
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, err
	}
	var head struct {
		Tensors []struct {
			Name   string `json:"name"`
			DType  string `json:"dtype"`
			Shape  []int  `json:"shape"`
			NBytes int    `json:"nbytes"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal(h, &head); err != nil {
		return nil, fmt.Errorf("hostile executor: header: %w", err)
	}
	if err := json.Unmarshal(h, v); err != nil {
		return nil, fmt.Errorf("hostile executor: header: %w", err)
	}
	var out []hostileTensor
	for _, d := range head.Tensors {
		if d.NBytes < 0 || d.NBytes > 1<<30 {
			return nil, fmt.Errorf("hostile executor: tensor %s: nbytes %d", d.Name, d.NBytes)
		}
		b := make([]byte, d.NBytes)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		elems, size := 1, 8
		for _, k := range d.Shape {
			elems *= k
		}
		if d.DType == "float32" {
			size = 4
		}
		if elems*size != len(b) {
			return nil, fmt.Errorf("hostile executor: tensor %s: %d bytes for %s %v", d.Name, len(b), d.DType, d.Shape)
		}
		var t *tensor.Tensor
		switch d.DType {
		case "float32":
			t = tensor.NewFloat32(d.Shape...)
			for i := range t.F32 {
				t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "float64":
			t = tensor.NewFloat64(d.Shape...)
			for i := range t.F64 {
				t.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
		case "int64":
			t = tensor.NewInt64(d.Shape...)
			for i := range t.I64 {
				t.I64[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			}
		default:
			return nil, fmt.Errorf("hostile executor: tensor %s: dtype %q", d.Name, d.DType)
		}
		out = append(out, hostileTensor{name: d.Name, t: t})
	}
	return out, nil
}

// leBytesOf is a tensor's elements as little-endian bytes, the wire's
// layout.
func leBytesOf(t *tensor.Tensor) []byte {
	var b []byte
	switch t.DType {
	case tensor.Float32:
		b = make([]byte, 4*len(t.F32))
		for i, v := range t.F32 {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case tensor.Float64:
		b = make([]byte, 8*len(t.F64))
		for i, v := range t.F64 {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	case tensor.Int64:
		b = make([]byte, 8*len(t.I64))
		for i, v := range t.I64 {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	}
	return b
}
