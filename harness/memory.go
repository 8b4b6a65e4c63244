package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// ErrMemory: a case needs more memory than the budget (Options.MaxMemory)
// allows, so it was not run. Its message says how much the case needs,
// how large the budget is and how to raise it.
var ErrMemory = errors.New("memory budget exceeded")

// MaxBatch is the largest batch size: the limit of //rx:batches, which the
// checker (package program) enforces, applied also to Options.Batches and
// `rxeq run --batch`, so that no entry point bypasses it.
const MaxBatch = 1 << 24

// FallbackMaxMemory is the default memory budget where the machine's
// memory cannot be read (no /proc/meminfo).
const FallbackMaxMemory = 4 << 30

// DefaultMaxMemory returns the memory budget used when Options.MaxMemory
// is 0: half of what the machine can give this process, which is the
// smaller of MemAvailable (else MemTotal) from /proc/meminfo and the
// headroom of the cgroup v2 limit (memory.max − memory.current) when there
// is one; FallbackMaxMemory when neither can be read. Half, because the
// estimate counts live bytes and the Go heap may grow to twice its live
// size before a collection (GOGC=100); the rxeq command collects less
// often (GOGC=400) but sets a soft memory limit of twice this budget, so
// its heap stays within the same bound. It reads the files on every call.
func DefaultMaxMemory() int64 {
	avail, ok := readMeminfo("/proc/meminfo")
	if lim, lok := cgroupHeadroom("/sys/fs/cgroup"); lok && (!ok || lim < avail) {
		avail, ok = lim, true
	}
	if !ok || avail == 0 {
		return FallbackMaxMemory
	}
	return int64(min(avail/2, math.MaxInt64))
}

// readMeminfo returns MemAvailable (else MemTotal) in bytes.
func readMeminfo(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var total, avail uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil || kb > math.MaxUint64/1024 {
			continue
		}
		switch key {
		case "MemTotal":
			total = kb * 1024
		case "MemAvailable":
			avail = kb * 1024
		}
	}
	if avail > 0 {
		return avail, true
	}
	return total, total > 0
}

// cgroupHeadroom returns memory.max − memory.current of the cgroup v2
// mounted at dir, when memory.max is a number.
func cgroupHeadroom(dir string) (uint64, bool) {
	read := func(name string) (uint64, bool) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil
	}
	limit, ok := read("memory.max") // "max" when unlimited
	if !ok {
		return 0, false
	}
	used, _ := read("memory.current")
	if used >= limit {
		return 0, true
	}
	return limit - used, true
}

// ParseBytes reads a memory size: a whole or decimal number with an
// optional unit, binary (KiB, MiB, GiB, TiB, and K, M, G, T as their
// short forms: powers of 1024) or decimal (kB/KB, MB, GB, TB: powers of
// 1000), or B for bytes, as in "4GiB", "512MiB", "1.5GB" or "1048576".
// Case and a space before the unit do not matter. The result must be at
// least one byte and fit in an int64; otherwise the error wraps
// ErrOptions.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1e3, "mib": 1 << 20, "mb": 1e6, "m": 1 << 20,
		"gib": 1 << 30, "gb": 1e9, "g": 1 << 30, "tib": 1 << 40, "tb": 1e12, "t": 1 << 40}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil || mult == 0 {
		return 0, fmt.Errorf("%w: size %q: want a number with an optional unit, like 4GiB, 512MiB or 2GB", ErrOptions, s)
	}
	n := v * mult
	if n < 1 || n >= math.MaxInt64 || math.IsNaN(n) {
		return 0, fmt.Errorf("%w: size %q: want at least 1 byte and less than 8 EiB", ErrOptions, s)
	}
	return int64(n), nil
}

// FormatBytes prints a byte count with a binary unit: "512 B", "1.5 KiB",
// "3.9 GiB".
func FormatBytes(n uint64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[u])
}

// Footprint is what one executor needs for one case, in bytes (an upper
// bound, see EstimateMemory).
type Footprint struct {
	Executor      executor.Name
	Inputs        uint64
	Outputs       uint64
	Intermediates uint64
}

// Total returns the sum of the parts (saturating at math.MaxUint64).
func (f Footprint) Total() uint64 {
	return satAdd(satAdd(f.Inputs, f.Outputs), f.Intermediates)
}

// MemoryEstimate is an upper bound of the memory one (function, batch)
// case group needs (see EstimateMemory).
type MemoryEstimate struct {
	Function string
	Batch    int
	// Inputs are the generated inputs, shared by the group.
	Inputs    uint64
	Executors []Footprint
	// Total is the sum of everything; math.MaxUint64 when Overflow.
	Total uint64
	// Overflow is set when a size does not fit in 64 bits (Total is then
	// math.MaxUint64): no budget can hold the case.
	Overflow bool
}

// String summarises the estimate: "40.0 GiB (inputs 16.0 GiB; oracle
// 16.0 GiB = inputs …, outputs …, intermediates …; …)".
func (m MemoryEstimate) String() string {
	if m.Overflow {
		return "more than 16 EiB (a size overflows 64 bits)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (generated inputs %s", FormatBytes(m.Total), FormatBytes(m.Inputs))
	for _, f := range m.Executors {
		fmt.Fprintf(&b, "; %s %s = inputs %s, outputs %s, intermediates %s", f.Executor, FormatBytes(f.Total()),
			FormatBytes(f.Inputs), FormatBytes(f.Outputs), FormatBytes(f.Intermediates))
	}
	b.WriteString(")")
	return b.String()
}

// valueOverhead is added per intermediate buffer: the native arena pads
// each buffer to 64 bytes and adds a spare cache line.
const valueOverhead = 128

// EstimateMemory returns an upper bound of the bytes that running fn at
// batch through executors (the reference first) needs at once. It is the one place where rxeq sizes a case before allocating
// anything; every entry point (Run, and the fuzzer's Checker) compares it
// with the budget through CheckMemory.
//
// Shapes are the declared ones with the batch symbol (BatchSymbol) bound to
// batch and other symbols from dims (an unbound symbol counts as 0:
// GenerateInputs reports it). An element is 8 bytes when int64 (or bool),
// 4 bytes when float32, or the FloatBytes of the executor's
// executor.MemoryProfile for its float elements (the oracle: 8). The
// bound is:
//
//   - the generated inputs, once for the group (float32);
//   - for each executor: the copy of the inputs it is given (float32) plus,
//     except for executors whose profile says InPlace (fallback, native in
//     this process), which read it in
//     place, one more in its own precision (the oracle widens to float64,
//     an isolated or external executor encodes them for its process);
//   - its outputs, which the runner keeps until the group is judged;
//   - its intermediates: every value of the lowered function (lowered; the
//     IR's values are the expressions the oracle evaluates too) that is
//     not a parameter, twice (the native backend double-buffers a value
//     that an op reads and writes; the Go executors leave the previous
//     loop iteration's buffer to the collector), plus 128 bytes each.
//
// When the first executor (the reference) is an executor.Rounder (the
// oracle) and
// another one runs, the oracle's footprint is counted once more, named
// "oracle rounded for the blame": a failing case runs it again rounding to
// float32 (see Case.Blame).
//
// Executors run one after another within a group, but all of it is
// counted as live at once. The native arena's reused block, --dump's
// retained tensors and runs abandoned at a timeout are not counted.
// Arithmetic is checked: a size that overflows 64 bits sets Overflow.
func EstimateMemory(fn *program.Func, lowered *ir.Func, batch int, dims map[string]int, executors []executor.Executor) MemoryEstimate {
	m := MemoryEstimate{Function: fn.Name, Batch: batch}
	env := map[string]uint64{}
	if sym := BatchSymbol(fn); sym != "" {
		env[sym] = uint64(max(batch, 0))
	}
	for s, v := range dims {
		if _, isBatch := env[s]; !isBatch && v >= 0 {
			env[s] = uint64(v)
		}
	}
	var over bool
	size := func(t ir.Type, floatBytes uint64) uint64 {
		n := uint64(1)
		for _, d := range t.Shape {
			v := uint64(max(d.Size, 0))
			if d.IsSym() {
				v = env[d.Sym]
			}
			n = checkedMul(n, v, &over)
		}
		elem := uint64(8)
		if t.DType == ir.Float32 {
			elem = floatBytes
		}
		return checkedMul(n, elem, &over)
	}
	for _, p := range fn.Params {
		m.Inputs = checkedAdd(m.Inputs, size(p.Type, 4), &over)
	}
	total := m.Inputs
	for _, e := range executors {
		prof := executor.ProfileOf(e)
		fb := uint64(prof.FloatBytes)
		f := Footprint{Executor: e.Name(), Inputs: m.Inputs}
		if !prof.InPlace {
			for _, p := range fn.Params {
				f.Inputs = checkedAdd(f.Inputs, size(p.Type, fb), &over)
			}
		}
		for _, r := range fn.Results {
			f.Outputs = checkedAdd(f.Outputs, size(r.Type, fb), &over)
		}
		if lowered != nil {
			for _, v := range lowered.Values {
				if v.Kind == ir.Param {
					continue
				}
				b := checkedAdd(checkedMul(size(v.Type, fb), 2, &over), valueOverhead, &over)
				f.Intermediates = checkedAdd(f.Intermediates, b, &over)
			}
		}
		m.Executors = append(m.Executors, f)
		total = checkedAdd(total, f.Total(), &over)
	}
	if len(executors) > 1 {
		if _, exact := executors[0].(executor.Rounder); exact {
			f := m.Executors[0]
			f.Executor = "oracle rounded for the blame"
			m.Executors = append(m.Executors, f)
			total = checkedAdd(total, f.Total(), &over)
		}
	}
	m.Total, m.Overflow = total, over
	if over {
		m.Total = math.MaxUint64
	}
	return m
}

// CheckMemory compares an estimate with a budget of limit bytes (no budget
// when limit <= 0) and returns nil when it fits, else an error wrapping
// ErrMemory that says what the case needs, what the budget is and how to
// raise it.
func CheckMemory(m MemoryEstimate, limit int64) error {
	if limit <= 0 || (!m.Overflow && m.Total <= uint64(limit)) {
		return nil
	}
	return fmt.Errorf("%w: %s at batch %d needs %s, but the memory budget is %s; "+
		"raise it with --max-memory (harness.Options.MaxMemory for library users) or run a smaller batch",
		ErrMemory, m.Function, m.Batch, m, FormatBytes(uint64(limit)))
}

func checkedMul(a, b uint64, over *bool) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		*over = true
		return math.MaxUint64
	}
	return lo
}

func checkedAdd(a, b uint64, over *bool) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		*over = true
		return math.MaxUint64
	}
	return s
}

func satAdd(a, b uint64) uint64 {
	var over bool
	return checkedAdd(a, b, &over)
}

// memoryBudget is the budget of one Run, shared by the groups running at
// once: a group reserves its estimate before it generates its inputs and
// gives it back when it is judged, so concurrent groups never hold more
// than limit between them. Waiting is not first-come-first-served.
type memoryBudget struct {
	limit   uint64 // 0: no budget
	mu      sync.Mutex
	used    uint64
	changed chan struct{} // closed and replaced on every release
}

func newMemoryBudget(limit int64) *memoryBudget {
	b := &memoryBudget{changed: make(chan struct{})}
	if limit > 0 {
		b.limit = uint64(limit)
	}
	return b
}

// acquire reserves n bytes (n <= limit), waiting until they are free or
// ctx ends.
func (b *memoryBudget) acquire(ctx context.Context, n uint64) error {
	if b.limit == 0 {
		return nil
	}
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives back n bytes reserved by acquire.
func (b *memoryBudget) release(n uint64) {
	if b.limit == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}
