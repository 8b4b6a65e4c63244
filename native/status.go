package native

// status mirrors rx_status for the Go side: a call's status code, its
// operands and the call's counters.
type status struct {
	code, a, b, c, d int64
	isa              int64 // rx_status.isa: the ISA the kernels ran at, plus one (0: none)
	counters         Counters
}
