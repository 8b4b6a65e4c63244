//go:build cgo

package native

// withCgo reports whether this build can load and call compiled code
// (loader.go, frame.go and torch_loader.go are built).
const withCgo = true
