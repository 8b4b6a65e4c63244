package isolate

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rextio/rxeq/native"
)

// Serve runs the worker side of the protocol: it sends the hello, then
// answers requests read from in on out until in reaches EOF (the parent
// closed the pipe: a clean end, nil) or ctx is done. The worker holds at
// most one program; a new prepare replaces it.
//
// Serve is what `rxeq worker` runs (through ServeStdio); a test binary can
// run it from TestMain to act as its own worker.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	bw := bufio.NewWriter(out)
	enc := gob.NewEncoder(bw)
	dec := gob.NewDecoder(bufio.NewReader(in))
	send := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := send(hello{Protocol: protocolVersion, PID: os.Getpid()}); err != nil {
		return fmt.Errorf("%w: sending hello: %v", ErrWorker, err)
	}
	var prog *native.Program
	defer func() {
		if prog != nil {
			prog.Close()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%w: reading a request: %v", ErrWorker, err)
		}
		var resp response
		switch req.Kind {
		case reqPrepare:
			if prog != nil {
				prog.Close()
				prog = nil
			}
			p, err := prepareProgram(ctx, &req)
			if err != nil {
				resp.Err = encodeError(err)
				break
			}
			prog, resp.Info, resp.Source = p, p.Info(), p.Source()
		case reqRun:
			resp = runProgram(ctx, prog, &req)
		default:
			resp.Err = encodeError(fmt.Errorf("%w: unknown request %q", ErrWorker, req.Kind))
		}
		if err := send(&resp); err != nil {
			return fmt.Errorf("%w: sending a response: %v", ErrWorker, err)
		}
	}
}

func prepareProgram(ctx context.Context, req *request) (*native.Program, error) {
	if req.Program == nil {
		return nil, fmt.Errorf("%w: prepare without a program", ErrWorker)
	}
	p, err := decodeProgram(req.Program)
	if err != nil {
		return nil, err
	}
	return native.Compile(ctx, p, native.Options{CC: req.CC, CacheDir: req.Cache, Mode: req.Mode, CompileTimeout: req.CompileTimeout,
		Runtime: req.Runtime, CXX: req.CXX, TorchThreads: req.TorchThreads})
}

func runProgram(ctx context.Context, prog *native.Program, req *request) response {
	resp := response{Path: string(native.PathNative)}
	if req.Runtime == native.RuntimeTorch {
		resp.Path = string(native.PathTorch)
	}
	if prog == nil {
		resp.Err = encodeError(fmt.Errorf("%w: run before prepare", ErrWorker))
		return resp
	}
	inputs, err := decodeTensors(req.Inputs)
	if err != nil {
		resp.Err = encodeError(err)
		return resp
	}
	res, err := prog.Run(ctx, req.Func, inputs)
	if err != nil {
		if path, _ := prog.PathOf(req.Func); path != "" {
			resp.Path = string(path)
		}
		resp.Err = encodeError(err)
		return resp
	}
	resp.Path = string(res.Path)
	resp.Outputs = encodeTensors(res.Outputs)
	return resp
}

// ServeStdio serves the protocol on the process's stdin and stdout. It
// first moves the protocol onto a private duplicate of stdout and points
// file descriptor 1 at stderr, so that anything else the process prints
// (a C library, generated code) lands in stderr instead of corrupting the
// protocol.
func ServeStdio(ctx context.Context) error {
	out, err := privateStdout()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWorker, err)
	}
	defer out.Close()
	return Serve(ctx, os.Stdin, out)
}
