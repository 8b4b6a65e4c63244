package main

import "github.com/rextio/rxeq/pyexport"

// exportPython writes one Python module for every function asked for,
// named after the program's file (reference.py).
func exportPython(format pyexport.Format) func(req exportRequest) ([]exportedFile, error) {
	return func(req exportRequest) ([]exportedFile, error) {
		m, err := pyexport.Export(req.IR, pyexport.Options{Format: format, Funcs: req.Funcs, Source: req.Source, Version: req.Version})
		if err != nil {
			return nil, err
		}
		return []exportedFile{{Name: pyexport.ModuleFileName(req.IR.File, format), Data: m.Source}}, nil
	}
}
