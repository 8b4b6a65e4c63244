//go:build cgo

package ort

import "C"

// rxortLog receives ONNX Runtime's log messages (capi.c's logger) and
// hands them to the function SetLogger installed.
//
//export rxortLog
func rxortLog(severity C.int, category, message *C.char) {
	if f := logger.Load(); f != nil {
		(*f)(Severity(severity), C.GoString(category), C.GoString(message))
	}
}
