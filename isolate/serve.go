package isolate

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program/ir"
)

// Serve runs the worker side of the protocol: it sends the hello, then
// answers requests read from in on out until in reaches EOF (the parent
// closed the pipe: a clean end, nil) or ctx is done. The worker holds any
// number of programs by ID (an Executor without a Pool uses one ID); a
// prepare replaces the program of its ID, a build prepares several at once
// in one library, and a request's Drop list releases programs.
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
	progs := map[int]*native.Program{}
	orts := map[int]executor.Prepared{} // ONNX Runtime's programs (request.ORT)
	release := func(id int) {
		if p := progs[id]; p != nil {
			p.Close()
			delete(progs, id)
		}
		if p := orts[id]; p != nil {
			_ = p.Close()
			delete(orts, id)
		}
	}
	defer func() {
		for id := range progs {
			release(id)
		}
		for id := range orts {
			release(id)
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
		for _, id := range req.Drop {
			release(id)
		}
		var resp response
		switch req.Kind {
		case reqPrepare:
			release(req.ID)
			if req.ORT != nil {
				p, info, err := prepareORT(ctx, &req)
				if err != nil {
					resp.Err = encodeError(err)
					break
				}
				orts[req.ID] = p
				resp.Info = info
				break
			}
			p, err := prepareProgram(ctx, &req, req.Program)
			if err != nil {
				resp.Err = encodeError(err)
				break
			}
			progs[req.ID] = p
			resp.Info, resp.Source = p.Info(), p.Source()
		case reqBuild:
			resp = buildPrograms(ctx, &req, progs)
		case reqRun:
			if p := orts[req.ID]; p != nil {
				resp = runORT(ctx, p, &req)
				break
			}
			resp = runProgram(ctx, progs[req.ID], &req)
		default:
			resp.Err = encodeError(fmt.Errorf("%w: unknown request %q", ErrWorker, req.Kind))
		}
		if err := send(&resp); err != nil {
			return fmt.Errorf("%w: sending a response: %v", ErrWorker, err)
		}
	}
}

func options(req *request) native.Options {
	return req.Options
}

// buildPrograms builds req.Programs into one library (native.CompileBatch)
// and holds them under req.IDs. When the library cannot be built, each
// program is compiled alone, so that a compile error is the one of its own
// program, with the text a prepare of it gives.
func buildPrograms(ctx context.Context, req *request, progs map[int]*native.Program) response {
	var resp response
	if len(req.IDs) != len(req.Programs) {
		resp.Err = encodeError(fmt.Errorf("%w: build of %d programs under %d IDs", ErrWorker, len(req.Programs), len(req.IDs)))
		return resp
	}
	resp.Members = make([]member, len(req.Programs))
	ps := make([]*ir.Program, len(req.Programs))
	for i, wp := range req.Programs {
		p, err := decodeProgram(wp)
		if err != nil {
			resp.Members[i].Err = encodeError(err)
			continue
		}
		ps[i] = p
	}
	built, errs, err := native.CompileBatch(ctx, ps, options(req))
	if err != nil {
		if ctx.Err() != nil {
			resp.Err = encodeError(err)
			return resp
		}
		built, errs = make([]*native.Program, len(ps)), make([]error, len(ps))
		for i, p := range ps {
			if p != nil {
				built[i], errs[i] = native.Compile(ctx, p, options(req))
			}
		}
	}
	for i, p := range built {
		id := req.IDs[i]
		if p == nil {
			if resp.Members[i].Err == nil {
				resp.Members[i].Err = encodeError(errs[i])
			}
			continue
		}
		if old := progs[id]; old != nil {
			old.Close()
		}
		progs[id] = p
		resp.Members[i].Info, resp.Members[i].Source = p.Info(), p.Source()
	}
	return resp
}

func prepareProgram(ctx context.Context, req *request, wp *wireProgram) (*native.Program, error) {
	if wp == nil {
		return nil, fmt.Errorf("%w: prepare without a program", ErrWorker)
	}
	p, err := decodeProgram(wp)
	if err != nil {
		return nil, err
	}
	return native.Compile(ctx, p, options(req))
}

func runProgram(ctx context.Context, prog *native.Program, req *request) response {
	resp := response{Path: executor.Native}
	if req.Options.Runtime == executor.Torch {
		resp.Path = executor.Torch
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
	res, err := prog.RunWith(ctx, req.Func, inputs, req.Call)
	if err != nil {
		if path, _ := prog.PathOf(req.Func); path != "" {
			resp.Path = path
		}
		resp.Err = encodeError(err)
		return resp
	}
	resp.Path = res.Path
	resp.Outputs = encodeTensors(res.Outputs)
	// The encoding is a copy: the next call of the same sizes reuses the
	// outputs' memory (no allocation, collection or page fault for them).
	res.Release()
	return resp
}

// prepareORT prepares req's program with ONNX Runtime (req.ORT) and lazy
// sessions, so that ONNX Runtime creates each function's session during
// that function's first call: a crash there is that call's.
func prepareORT(ctx context.Context, req *request) (executor.Prepared, native.BuildInfo, error) {
	if req.Program == nil {
		return nil, native.BuildInfo{}, fmt.Errorf("%w: prepare without a program", ErrWorker)
	}
	p, err := decodeProgram(req.Program)
	if err != nil {
		return nil, native.BuildInfo{}, err
	}
	e := *req.ORT
	e.Lazy = true
	prep, err := e.Prepare(ctx, nil, p)
	if err != nil {
		return nil, native.BuildInfo{}, err
	}
	var info native.BuildInfo
	if b, ok := prep.(executor.Built); ok {
		info = b.Info()
	}
	return prep, info, nil
}

// runORT runs one call of an ONNX Runtime program.
func runORT(ctx context.Context, prep executor.Prepared, req *request) response {
	var resp response
	inputs, err := decodeTensors(req.Inputs)
	if err != nil {
		resp.Err = encodeError(err)
		return resp
	}
	if pr, ok := prep.(*ort.Prepared); ok {
		// The encoding is a copy: the next call of the same shapes has
		// ONNX Runtime write into the same memory (Result.Release).
		resp.Path = pr.Name()
		res, err := pr.RunResult(ctx, req.Func, inputs)
		if err != nil {
			resp.Err = encodeError(err)
			return resp
		}
		resp.Outputs = encodeTensors(res.Outputs)
		res.Release()
		return resp
	}
	out, err := prep.Run(ctx, req.Func, inputs)
	resp.Path = out.Path
	if err != nil {
		resp.Err = encodeError(err)
		return resp
	}
	resp.Outputs = encodeTensors(out.Outputs)
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
