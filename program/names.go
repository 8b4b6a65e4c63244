package program

// Builtins returns the name of every builtin function of the language, in
// declaration order (MatMul first, CheckedDiv last), as a program writes
// it. The list is the checker's own: a builtin added to the language
// appears here without further changes, so documentation and tooling can
// be checked against it.
func Builtins() []string {
	names := make([]string, 0, int(CheckedDiv))
	for b := MatMul; b <= CheckedDiv; b++ {
		names = append(names, b.String())
	}
	return names
}

// FileDirectives returns the name of every file-level directive the
// checker accepts (written //rx:NAME outside any function), in the order
// the checker lists them in its errors.
func FileDirectives() []string { return append([]string(nil), fileDirectives...) }

// FuncDirectives returns the name of every function-level directive the
// checker accepts (written //rx:NAME inside a function body).
func FuncDirectives() []string { return append([]string(nil), funcDirectives...) }

// Directives returns every directive name the checker accepts: the
// file-level ones followed by the function-level ones.
func Directives() []string { return append(FileDirectives(), funcDirectives...) }
