package main

import "github.com/rextio/rxeq/jsexport"

// exportTFJS writes one TensorFlow.js CommonJS module for every function
// asked for, named after the program's file (reference_tfjs.js).
func exportTFJS(req exportRequest) ([]exportedFile, error) {
	m, err := jsexport.Export(req.IR, jsexport.Options{Funcs: req.Funcs, Source: req.Source, Version: req.Version})
	if err != nil {
		return nil, err
	}
	return []exportedFile{{Name: jsexport.ModuleFileName(req.IR.File), Data: m.Source}}, nil
}
