package reports

// Schema is the version tag of the JSON report format this package writes
// and reads.
const Schema = "rxeq.report/v1"

// Status is the outcome of a case or a lock.
type Status string

// The statuses. Fail means the outputs (or the lock) disagree; Error means
// the case could not be judged (the executor could not run, a harness
// failure, a timeout); Skip means it was not run.
const (
	StatusPass  Status = "pass"
	StatusFail  Status = "fail"
	StatusError Status = "error"
	StatusSkip  Status = "skip"
	// StatusXFail: a failure that an entry of the known-discrepancy
	// ledger documents (the message starts with the entry's text);
	// JUnit <skipped>.
	StatusXFail Status = "xfail"
	// StatusXPass: a pass where a ledger entry expects a failure (the
	// discrepancy no longer reproduces); a JUnit pass, a failure under
	// --strict (where the status is fail).
	StatusXPass Status = "xpass"
)

// Report is one run of rxeq: every case and every lock, with what is needed
// to reproduce it.
//
// Slices round-trip exactly through JSON: nil is written as null and read
// back as nil, an empty slice as [] and read back empty.
type Report struct {
	Schema      string  `json:"schema"`       // always Schema
	ToolVersion string  `json:"tool_version"` // rxeq's version
	Compiler    string  `json:"compiler"`     // the C compiler's identity (e.g. "cc (Debian 12.2.0-14) 12.2.0")
	Seed        uint64  `json:"seed"`         // the run's base seed (--seed)
	Duration    float64 `json:"duration_s"`   // wall time of the run, in seconds
	Cases       []Case  `json:"cases"`
	Locks       []Lock  `json:"locks"`
	// Framework is the version of the framework behind the torch
	// executor ("libtorch 1.13.0 (…)"), when it ran.
	Framework string `json:"framework,omitempty"`
	// Frameworks are the versions behind each executor that reported
	// them, by executor name: torch's libtorch, ONNX Runtime's version and
	// graph optimization level for onnxruntime and onnxruntime-noopt, the
	// Python frameworks' versions for pytorch, torchscript and numpy
	// ({"pytorch": "numpy 1.24.2, python 3.11.2, torch 1.13.0"}).
	Frameworks map[string]string `json:"frameworks,omitempty"`
	// Unavailable lists default executors that did not run because this
	// machine cannot run them (torch without libtorch), with the reason.
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	// Inputs, for a run with --inputs, says for every group where its
	// inputs came from.
	Inputs []InputSource `json:"inputs,omitempty"`
	// Shard says which part of the run the report holds (1/1 for an
	// unsharded run), and how many groups the whole run has; nil in
	// reports of older versions of rxeq.
	Shard *Shard `json:"shard,omitempty"`
}

// Shard is the part of a run one report holds: rxeq run --shard
// Index/Total, and Groups, the number of groups (scenario × function ×
// batch) of the whole run, every shard's. Group g belongs to shard
// g mod Total + 1.
type Shard struct {
	Index  int `json:"index"`
	Total  int `json:"total"`
	Groups int `json:"groups"`
}

// InputSource says where the inputs of one group came from under
// --inputs: the .npy file of each parameter that had one, and the
// parameters generated from their //rx:input.
type InputSource struct {
	Case      string            `json:"case"`                // "SCENARIO/FUNCTION/bBATCH"
	Files     map[string]string `json:"files"`               // parameter -> .npy file
	Generated []string          `json:"generated,omitempty"` // parameters without a file
}

// Unavailable is an executor left out of a run, and why.
type Unavailable struct {
	Executor string `json:"executor"`
	Reason   string `json:"reason"`
}

// Case is one scenario × function × batch × executor.
type Case struct {
	Scenario string `json:"scenario"`
	Function string `json:"function"`
	Batch    int    `json:"batch"`
	Executor string `json:"executor"` // "oracle", "fallback", "native" or a user's executor
	Group    int    `json:"group"`    // the group's number in the whole run's order, from 0 (see Shard)
	Path     string `json:"path"`     // the path that actually ran (in auto mode native may hand over to fallback)
	Seed     uint64 `json:"seed"`     // the seed the case's inputs were generated from
	Status   Status `json:"status"`   // pass, fail, error, skip, xfail or xpass
	// Check is "invariance" for the executor's position and batch
	// invariance against itself (rxeq run --invariance); absent for the
	// comparison with the reference.
	Check    string   `json:"check,omitempty"`
	Duration float64  `json:"duration_s"`       // seconds
	Timing   *Timing  `json:"timing,omitempty"` // where Duration went, when known
	Outputs  []Output `json:"outputs"`          // one per compared output
	Error    string   `json:"error,omitempty"`  // the executor's error text, if it returned one
	// Blame, for a case that failed on its outputs: "float32-limit" when a
	// reference rounded to float32 at every op misses the same way,
	// "executor" when float32 rounding does not explain the mismatch.
	Blame string `json:"blame,omitempty"`
	// Twin is the executor this case's executor must equal bit for bit
	// and was compared with ("native" for native-avx2), when both ran.
	Twin string `json:"twin,omitempty"`
	// Message explains a fail, error or skip in full (for a fail: the
	// mismatch reports of the failing outputs, or an error disagreement);
	// its first line is a summary.
	Message string `json:"message,omitempty"`
}

// Name is the case's test name: "FUNCTION/bBATCH/EXECUTOR".
func (c *Case) Name() string {
	if c.Check != "" {
		return c.Function + "/b" + itoa(c.Batch) + "/" + c.Executor + "/" + c.Check
	}
	return c.Function + "/b" + itoa(c.Batch) + "/" + c.Executor
}

// Timing splits a case's duration, in seconds: the executor's preparation
// of the program (code generation, C compile or cache lookup; charged to the
// first case that needed it), input generation, execution and comparison.
type Timing struct {
	Prepare float64 `json:"prepare_s"`
	Inputs  float64 `json:"inputs_s"`
	Execute float64 `json:"execute_s"`
	Compare float64 `json:"compare_s"`
}

// Tolerance is the allowance an output was compared with:
// |got − want| ≤ ATol + RTol·|want|.
type Tolerance struct {
	RTol float64 `json:"rtol"`
	ATol float64 `json:"atol"`
	// ULP, when set, is the output's ULP bound (//rx:tolerance OUT ulp=N):
	// at most that many float32 units in the last place from the oracle's
	// value rounded to float32. NoAbsRel says rtol and atol were not
	// given, so only the ULP bound applies.
	ULP      *int64 `json:"ulp,omitempty"`
	NoAbsRel bool   `json:"ulp_only,omitempty"`
}

// Output is the comparison of one output of a case with its reference.
type Output struct {
	Name      string     `json:"name"`
	Against   string     `json:"against"`   // the reference: "oracle", or another executor for a ULP comparison
	Tolerance *Tolerance `json:"tolerance"` // nil for exact (int64) and ULP comparisons
	OK        bool       `json:"ok"`

	Total      int    `json:"total"`
	Mismatches int    `json:"mismatches"`
	MaxAbs     Number `json:"max_abs"`
	MaxRel     Number `json:"max_rel"`
	MaxULP     uint64 `json:"max_ulp"`

	MaxAbsIndex []int     `json:"max_abs_index"`
	MaxRelIndex []int     `json:"max_rel_index"`
	WorstIndex  []int     `json:"worst_index"`
	NearTies    []NearTie `json:"near_ties"`

	Report string `json:"report"` // the one-line summary ("probs: 3 / 128 mismatched …")
}

// NearTie is a class row where the oracle's best scores were within
// tolerance of each other, so any of Classes was accepted.
type NearTie struct {
	Index   []int   `json:"index"`
	Classes []int64 `json:"classes"`
	Want    int64   `json:"want"`
	Got     int64   `json:"got"`
}

// Lock is the source-lock result of one function.
type Lock struct {
	Scenario string      `json:"scenario"`
	Function string      `json:"function"` // the .rx function
	CFunc    string      `json:"cfunc"`    // the generated C function
	Group    int         `json:"group"`    // the number of the function's first group, whose shard checks the lock
	Status   Status      `json:"status"`
	Duration float64     `json:"duration_s"`
	Checks   []LockCheck `json:"checks"`
	Message  string      `json:"message,omitempty"` // the failure text with the generated body
}

// Name is the lock's test name: "FUNCTION/lock".
func (l *Lock) Name() string { return l.Function + "/lock" }

// LockCheck is one //rx:lock or //rx:lock-not line.
type LockCheck struct {
	Kind    string `json:"kind"` // "lock", "lock-not", "lock-next" or "lock-same"
	Regexp  bool   `json:"regexp"`
	Text    string `json:"text"`
	Pos     string `json:"pos"` // file:line:col in the .rx file
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"`
	Line    int    `json:"line,omitempty"` // line of the generated C where it matched (or, for lock-not, appeared)
	Message string `json:"message,omitempty"`
}
