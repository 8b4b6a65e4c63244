package main

import "github.com/rextio/rxeq/onnx"

// exportONNX writes one ONNX model per function, named F.onnx.
func exportONNX(req exportRequest) ([]exportedFile, error) {
	var out []exportedFile
	for _, fn := range req.Funcs {
		b, err := onnx.Export(req.IR, fn, onnx.Meta{Source: req.Source, Version: req.Version})
		if err != nil {
			return nil, err
		}
		out = append(out, exportedFile{Name: fn + ".onnx", Data: b})
	}
	return out, nil
}
