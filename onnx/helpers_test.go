package onnx_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
)

// python is Debian's interpreter, which has python3-onnx (ci/setup.sh
// installs it).
const python = "/usr/bin/python3"

// requireONNX skips the spec, with the reason, when python3-onnx is missing.
func requireONNX() {
	GinkgoHelper()
	if err := exec.Command(python, "-c", "import onnx").Run(); err != nil {
		Skip("python3-onnx is not installed (" + python + " -c 'import onnx': " + err.Error() + "); ci/setup.sh installs it")
	}
}

// runPython runs script with args and returns its stdout.
func runPython(script string, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "python: %s", stderr.String())
	return string(out)
}

// checkModels runs onnx.checker.check_model(full_check=True) on every
// model and returns the failures by name ("" when a model passes).
func checkModels(models map[string][]byte) map[string]string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for name, b := range models {
		Expect(os.WriteFile(filepath.Join(dir, name+".onnx"), b, 0o644)).To(Succeed())
	}
	out := runPython(`
import glob, json, os, sys, onnx
res = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx"))):
    name = os.path.basename(f)[:-5]
    try:
        onnx.checker.check_model(onnx.load(f), full_check=True)
        res[name] = ""
    except Exception as e:
        res[name] = type(e).__name__ + ": " + str(e)
print(json.dumps(res))
`, dir)
	res := map[string]string{}
	Expect(json.Unmarshal([]byte(out), &res)).To(Succeed())
	return res
}

// catalog returns every catalog program (the edge scenarios included),
// lowered.
func catalog() []*ir.Program {
	GinkgoHelper()
	files, err := scenarios.Catalog()
	Expect(err).NotTo(HaveOccurred())
	var out []*ir.Program
	for _, f := range files {
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		out = append(out, p)
	}
	return out
}

func export(p *ir.Program, fn string) []byte {
	GinkgoHelper()
	b, err := onnx.Export(p, fn, onnx.Meta{Source: p.File, Version: "test"})
	Expect(err).NotTo(HaveOccurred())
	return b
}

// pyNode is a node as python3-onnx reads it.
type pyNode struct {
	Op      string              `json:"op"`
	Inputs  []string            `json:"inputs"`
	Outputs []string            `json:"outputs"`
	Ints    map[string][]int64  `json:"ints"`
	Graphs  map[string]*pyGraph `json:"graphs"`
}

// pyValue is a graph input or output as python3-onnx reads it: its name,
// element type and dims (a dim is its size, or its dim_param).
type pyValue struct {
	Name string   `json:"name"`
	Elem int      `json:"elem"`
	Dims []string `json:"dims"`
}

type pyGraph struct {
	Name    string    `json:"name"`
	Inputs  []pyValue `json:"inputs"`
	Outputs []pyValue `json:"outputs"`
	Nodes   []*pyNode `json:"nodes"`
}

type pyModel struct {
	IR       int               `json:"ir"`
	Opsets   map[string]int    `json:"opsets"`
	Producer string            `json:"producer"`
	Version  string            `json:"version"`
	Doc      string            `json:"doc"`
	Meta     map[string]string `json:"meta"`
	Graph    *pyGraph          `json:"graph"`
}

// readWithPython parses the model with onnx.load_from_string and returns
// what python3-onnx sees.
func readWithPython(b []byte) *pyModel {
	GinkgoHelper()
	return readAllWithPython(map[string][]byte{"m": b})["m"]
}

// readAllWithPython is readWithPython for several models, in one process.
func readAllWithPython(models map[string][]byte) map[string]*pyModel {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for name, b := range models {
		Expect(os.WriteFile(filepath.Join(dir, name+".onnx"), b, 0o644)).To(Succeed())
	}
	out := runPython(`
import glob, json, os, sys, onnx
from onnx import helper
def val(v):
    t = v.type.tensor_type
    return {"name": v.name, "elem": t.elem_type,
            "dims": [d.dim_param if d.HasField("dim_param") else str(d.dim_value) for d in t.shape.dim]}
def graph(g):
    return {"name": g.name, "inputs": [val(v) for v in g.input], "outputs": [val(v) for v in g.output],
            "nodes": [node(n) for n in g.node]}
def node(n):
    ints, graphs = {}, {}
    for a in n.attribute:
        if a.type == onnx.AttributeProto.INT: ints[a.name] = [a.i]
        elif a.type == onnx.AttributeProto.INTS: ints[a.name] = list(a.ints)
        elif a.type == onnx.AttributeProto.GRAPH: graphs[a.name] = graph(a.g)
    return {"op": n.op_type, "inputs": list(n.input), "outputs": list(n.output), "ints": ints, "graphs": graphs}
res = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx"))):
    m = onnx.load_from_string(open(f, "rb").read())
    res[os.path.basename(f)[:-5]] = {"ir": m.ir_version, "opsets": {o.domain: o.version for o in m.opset_import},
        "producer": m.producer_name, "version": m.producer_version, "doc": m.doc_string,
        "meta": {p.key: p.value for p in m.metadata_props}, "graph": graph(m.graph)}
print(json.dumps(res))
`, dir)
	res := map[string]*pyModel{}
	Expect(json.Unmarshal([]byte(out), &res)).To(Succeed())
	Expect(res).To(HaveLen(len(models)))
	return res
}

// ops returns the op types of g's nodes, in order (Constant nodes left out).
func ops(g *pyGraph) []string {
	var out []string
	for _, n := range g.Nodes {
		if n.Op != "Constant" {
			out = append(out, n.Op)
		}
	}
	return out
}

// find returns the first node of g (not descending) with op type op.
func find(g *pyGraph, op string) *pyNode {
	GinkgoHelper()
	for _, n := range g.Nodes {
		if n.Op == op {
			return n
		}
	}
	Fail("no " + op + " node in graph " + g.Name)
	return nil
}
