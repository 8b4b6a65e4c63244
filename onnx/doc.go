// Package onnx turns rxeq's lowered IR into ONNX models, so that ONNX
// Runtime (or any ONNX backend) can be held to rxeq's contract.
//
// Export writes one function as one model: IR version 8, opset 17 (what
// Debian's python3-onnx 1.12 checks), deterministic bytes, control flow
// kept as control flow (a for is a Loop, an if an If) and each rxeq op as
// the ONNX op a person would write, so a backend's own kernels and graph
// optimizer are what gets tested. Describe gives the model's inputs and
// outputs: the function's parameters and results in order, with the same
// names where they are safe identifiers (ModelName), int64 scalars as
// rank-0 int64 tensors and symbolic dimensions as dim_param. Checked
// integer arithmetic is the one place the export adds guards: its
// operands never reach a kernel that would crash, and the first failure
// comes out in the extra output ErrorOutput, which Signature.Err turns
// into the error every other executor returns.
//
// The protobuf encoding is written by hand (internal/onnxpb); docs/onnx.md
// has the op mapping and the error output's contract.
package onnx
