package external

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// FakeExecutorEnv names the environment variable that turns the harness
// test binary into an external executor (see ServeFakeExecutor); its value
// is the mode, and FakeBadFuncEnv names the function it misbehaves on.
const (
	FakeExecutorEnv = "RXEQ_FAKE_EXECUTOR"
	FakeBadFuncEnv  = "RXEQ_FAKE_BAD_FUNC"
	// FakeSlowRestartEnv, "DURATION:FILE", makes every start of the fake
	// but the first slow, as a framework's import on loaded cores: a start
	// that finds FILE sleeps DURATION before its hello; one that does not
	// creates it.
	FakeSlowRestartEnv = "RXEQ_FAKE_SLOW_RESTART"
)

// ServeFakeExecutor is a deliberately breakable external executor written
// against the protocol document: it runs every function of the programs it
// is sent with the fallback interpreter (parsing the prepare message's
// source again), and on the function named by $RXEQ_FAKE_BAD_FUNC it
// misbehaves as mode says:
//
//	ok        behave
//	crash     exit with status 3 mid-call
//	hang      never answer
//	garbage   print text to stdout before the answer
//	badid     answer with the wrong id
//	badtype   answer a run with a ready message
//	nocrc     leave input_crc32 out
//	dtype     return the first result as float64
//	shape     return the first result with an extra leading dimension
//	missing   leave the last result out
//	mutate    write into the first input, then report its checksum
//	unserved  leave the function out of the hello's list
//	refuse    declare the function unserved in ready, with a reason
//	oldproto  greet with another protocol version
//	error     fail with an unclassified error text
//	bigclaim  answer with a header claiming y as float32 [268435456]
//	          (1 GiB), send none of it and exit
//	manydims  answer with a header giving y 3,000,000 dimensions
//	exitafter exit with status 0 after every answer (between messages)
//	stray     print a line right after the answer's frame
//	forkcrash start `sleep 300` (its pid into $RXEQ_FAKE_PIDFILE), exit 3
//	forkclose on close, start `sleep 300` (pid as above), then exit 0
//	forkstay  start `sleep 300` (pid as above), then behave
//	escapecrash, escapeclose, escapehang, escapestay
//	          as forkcrash, forkclose, hang and forkstay, but the sleeper
//	          escapes: started by a shell that exits at once, in a
//	          session of its own (setsid), so neither its parent nor its
//	          process group is the fake's
//	nohello   never send the hello
//
// It returns the process's exit status.
func ServeFakeExecutor(mode string) int {
	bad := os.Getenv(FakeBadFuncEnv)
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	proto := Protocol
	if mode == "oldproto" {
		proto = "rxeq.executor/v0"
	}
	if mode == "nohello" {
		time.Sleep(time.Hour)
	}
	if spec := os.Getenv(FakeSlowRestartEnv); spec != "" {
		d, marker, _ := strings.Cut(spec, ":")
		if _, err := os.Stat(marker); err == nil {
			pause, _ := time.ParseDuration(d)
			time.Sleep(pause)
		} else if err := os.WriteFile(marker, nil, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fake executor:", err)
			return 2
		}
	}
	hello := map[string]any{"type": msgHello, "protocol": proto, "name": "fake-" + mode}
	if mode == "unserved" {
		hello["functions"] = []string{"lin"}
	}
	if err := writeFrame(out, hello); err != nil {
		return 2
	}
	type prog struct {
		its  map[string]*fallback.Interpreter
		file *program.File
	}
	progs := map[int]*prog{}
	for {
		var raw struct {
			Type     string `json:"type"`
			ID       uint64 `json:"id"`
			Program  int    `json:"program"`
			File     string `json:"file"`
			Source   string `json:"source"`
			Function string `json:"function"`
		}
		tensors, err := readFakeFrame(in, &raw)
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake executor:", err)
			return 2
		}
		switch raw.Type {
		case msgClose:
			switch mode {
			case "forkclose":
				startSleeper()
			case "escapeclose":
				startEscapee()
			}
			return 0
		case msgRelease:
			delete(progs, raw.Program)
			continue
		case msgPrepare:
			f, err := program.Parse(raw.File, []byte(raw.Source))
			if err != nil {
				_ = writeFrame(out, map[string]any{"type": msgError, "id": raw.ID, "message": err.Error()})
				continue
			}
			p, err := program.Lower(f)
			if err != nil {
				_ = writeFrame(out, map[string]any{"type": msgError, "id": raw.ID, "message": err.Error()})
				continue
			}
			pr := &prog{its: map[string]*fallback.Interpreter{}, file: f}
			for _, fn := range p.Funcs {
				it, err := fallback.New(fn)
				if err != nil {
					fmt.Fprintln(os.Stderr, "fake executor:", err)
					return 2
				}
				pr.its[fn.Name] = it
			}
			progs[raw.Program] = pr
			ready := map[string]any{"type": msgReady, "id": raw.ID}
			if mode == "refuse" {
				ready["unserved"] = map[string]string{bad: "the fake refuses it"}
			}
			_ = writeFrame(out, ready)
			continue
		case msgRun:
		default:
			fmt.Fprintln(os.Stderr, "fake executor: unknown message", raw.Type)
			return 2
		}
		pr := progs[raw.Program]
		misbehave := raw.Function == bad
		var saved float32
		inputs := map[string]*tensor.Tensor{}
		for _, t := range tensors {
			inputs[t.name] = t.t
		}
		if misbehave {
			switch mode {
			case "crash":
				fmt.Fprintln(os.Stderr, "fake executor: crashing on purpose")
				os.Exit(3)
			case "hang":
				time.Sleep(time.Hour)
			case "forkcrash":
				startSleeper()
				os.Exit(3)
			case "forkstay":
				startSleeper()
			case "escapecrash":
				startEscapee()
				os.Exit(3)
			case "escapehang":
				startEscapee()
				time.Sleep(time.Hour)
			case "escapestay":
				startEscapee()
			case "bigclaim", "manydims":
				shape := []int{268435456}
				if mode == "manydims" {
					shape = make([]int, 3_000_000)
				}
				sums := map[string]uint32{}
				for _, t := range tensors {
					sums[t.name] = crc32.ChecksumIEEE(leBytes(t.t))
				}
				_ = writeFrame(out, map[string]any{"type": msgResult, "id": raw.ID, "input_crc32": sums,
					"tensors": []wireTensor{{Name: "y", DType: "float32", Shape: shape, NBytes: 1 << 30}}})
				os.Exit(0)
			case "garbage":
				fmt.Fprintln(out, "debug: running", raw.Function)
			case "mutate":
				saved = tensors[0].t.F32[0]
				tensors[0].t.F32[0] = saved + 1
			}
		}
		sums := map[string]uint32{}
		for _, t := range tensors {
			sums[t.name] = crc32.ChecksumIEEE(leBytes(t.t))
		}
		id := raw.ID
		if misbehave && mode == "badid" {
			id += 7
		}
		if misbehave && mode == "mutate" {
			// Compute on the sent values, so only the checksum tells.
			tensors[0].t.F32[0] = saved
		}
		outs, err := pr.its[raw.Function].Run(context.Background(), inputs)
		if err == nil && misbehave && mode == "error" {
			err = errors.New("ValueError: the fake fails on purpose")
		}
		if err != nil {
			kind := ""
			var re *ir.RuntimeError
			if errors.As(err, &re) {
				kind = re.Kind.Error()
			}
			_ = writeFrame(out, map[string]any{"type": msgError, "id": id, "kind": kind, "message": err.Error(), "input_crc32": sums})
			continue
		}
		results := pr.file.Func(raw.Function).Results
		var descs []wireTensor
		var payloads [][]byte
		for i, r := range results {
			t := outs[r.Name]
			if misbehave && i == len(results)-1 && mode == "missing" {
				continue
			}
			if misbehave && i == 0 {
				switch mode {
				case "dtype":
					t = widen(t)
				case "shape":
					t = &tensor.Tensor{DType: t.DType, Shape: append([]int{1}, t.Shape...), F32: t.F32, I64: t.I64}
				}
			}
			b := leBytes(t)
			descs = append(descs, wireTensor{Name: r.Name, DType: t.DType.String(), Shape: t.Shape, NBytes: int64(len(b))})
			payloads = append(payloads, b)
		}
		reply := map[string]any{"type": msgResult, "id": id, "tensors": descs, "input_crc32": sums}
		if misbehave {
			switch mode {
			case "badtype":
				reply["type"] = msgReady
			case "nocrc":
				delete(reply, "input_crc32")
			}
		}
		if misbehave && mode == "stray" {
			// The frame and a line after it, in one write.
			var buf bytes.Buffer
			_ = writeFrame(bufio.NewWriter(&buf), reply, payloads...)
			buf.WriteString("debug: done\n")
			_, _ = out.Write(buf.Bytes())
			_ = out.Flush()
			continue
		}
		if err := writeFrame(out, reply, payloads...); err != nil {
			return 2
		}
		if mode == "exitafter" {
			return 0
		}
	}
}

// FakePidFileEnv names the file into which the fake executor writes the
// pid of the process it starts in the fork modes.
const FakePidFileEnv = "RXEQ_FAKE_PIDFILE"

// startSleeper starts `sleep 300` in the fake's process group and writes
// its pid to $RXEQ_FAKE_PIDFILE.
func startSleeper() {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fake executor:", err)
		return
	}
	_ = os.WriteFile(os.Getenv(FakePidFileEnv), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}

// startEscapee starts `sleep 300` through a shell that exits at once,
// in a new session (setsid), with its pid in $RXEQ_FAKE_PIDFILE: a
// double fork that leaves neither the fake's process tree nor its group.
func startEscapee() {
	// The sleeper writes its pid once it is in its own session, and the
	// shell exits only then: the escape is complete when the fake goes on.
	out, err := exec.Command("/bin/sh", "-c", `setsid sh -c 'printf %s $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec sleep 300' "$`+FakePidFileEnv+`" </dev/null >/dev/null 2>&1 &
while [ ! -s "$`+FakePidFileEnv+`" ]; do sleep 0.01; done`).CombinedOutput()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake executor:", err, string(out))
	}
}

func widen(t *tensor.Tensor) *tensor.Tensor {
	w := tensor.NewFloat64(t.Shape...)
	for i, v := range t.F32 {
		w.F64[i] = float64(v)
	}
	return w
}

type fakeTensor struct {
	name string
	t    *tensor.Tensor
}

// readFakeFrame reads a frame with the package's own reader and decodes
// its header into v too.
func readFakeFrame(r *bufio.Reader, v any) ([]fakeTensor, error) {
	m, err := readFrame(r, defaultMaxPayload, nil)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(m.raw, v); err != nil {
		return nil, err
	}
	var ts []fakeTensor
	for i, t := range m.Tensors {
		if m.decoded[i] == nil {
			return nil, fmt.Errorf("tensor %s: dtype %s", t.Name, t.DType)
		}
		ts = append(ts, fakeTensor{name: t.Name, t: m.decoded[i]})
	}
	return ts, nil
}
