package native

import "slices"

// CMacroNames returns the committed macro list (cmacros_gen.go), for the
// tests of package native_test.
func CMacroNames() []string { return slices.Clone(cMacros[:]) }
