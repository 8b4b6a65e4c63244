package cgen

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Program identifiers reach C only through Mangle, comments only through
// commentText, and numbers only through the literal printers below.
//
// Mangle keeps a name unchanged when it is a safe ASCII C identifier: it
// matches [A-Za-z][A-Za-z0-9_]*, is not a C keyword, not a reserved or
// well-known libc/POSIX name, not a macro defined where generated C is
// compiled (predefined by the compiler or by an included header, like
// EXIT_SUCCESS, SIZE_MAX or math_errhandling), and does not start with "rx_"/"RX_" (rxeq's
// own namespace) or "_" (the implementation's). Every other name becomes
// "rx_u_" followed by an injective encoding: ASCII letters and digits stay,
// "_" becomes "__", and any other rune r becomes "_" + lowercase hex of r +
// "_". So `int` is `rx_u_int`, `_x` is `rx_u___x`, `ρ` is `rx_u__3c1_` and
// `größe` is `rx_u_gr_f6__df_e`. Kept names cannot start with "rx_", mangled
// ones always start with "rx_u_", and the encoding is injective, so two
// distinct names never collide.
func Mangle(name string) string {
	if safeIdent(name) {
		return name
	}
	return "rx_u_" + encodeIdent(name)
}

// CFuncName returns the C name of the generated function for scoring
// function fn: "rx_fn_" + Mangle(fn). So score_linear is rx_fn_score_linear
// and a function named main is rx_fn_rx_u_main; no generated function can
// collide with libc or with another one.
func CFuncName(fn string) string { return "rx_fn_" + Mangle(fn) }

func encodeIdent(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r == '_':
			b.WriteString("__")
		default:
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	return b.String()
}

func safeIdent(s string) bool {
	if s == "" || reservedNames[s] {
		return false
	}
	if strings.HasPrefix(s, "rx_") || strings.HasPrefix(s, "RX_") || strings.HasPrefix(s, "Rx_") || strings.HasPrefix(s, "rX_") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

//go:generate go run ../internal/gencmacros -o cmacros_gen.go

// MacroNames returns the committed, sorted list of the C macro names that
// generated C can see and that Mangle therefore never keeps (cmacros_gen.go,
// written by `go generate ./native/cgen`), so that a test can compare it
// with what the local compiler defines.
func MacroNames() []string { return slices.Clone(cMacros[:]) }

// reservedNames are the C11 keywords, the names the generated code and its
// headers use, the libc/POSIX names a generated identifier must never
// shadow or define, and every macro that generated C can see (cMacros:
// derived by `go generate` from the compiler's `-dM -E` output over what
// the translation unit includes, not kept by hand; a macro name used as an
// identifier would be replaced by the preprocessor). Rather than trust this
// list to be complete, the generator also keeps every identifier it
// defines local to a function.
var reservedNames = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range cMacros {
		m[w] = true
	}
	for _, w := range strings.Fields(`
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
alignas alignof bool true false noreturn static_assert thread_local complex imaginary asm typeof
NULL EOF errno stdin stdout stderr assert offsetof va_list va_arg va_start va_end
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ssize_t ptrdiff_t intptr_t uintptr_t
intmax_t uintmax_t wchar_t off_t time_t clock_t FILE
INT64_MIN INT64_MAX INT64_C UINT64_C INFINITY NAN HUGE_VAL HUGE_VALF
main malloc calloc realloc free exit abort atexit _Exit quick_exit system getenv memcpy memmove memset memcmp
strlen strcpy strncpy strcmp strncmp strcat strdup printf fprintf sprintf snprintf puts putchar scanf
fopen fclose fread fwrite signal raise setjmp longjmp dlopen dlsym dlclose
abs labs llabs div ldiv rand srand qsort bsearch
sin cos tan asin acos atan atan2 sinh cosh tanh exp exp2 expm1 log log2 log10 log1p pow sqrt cbrt hypot
fabs floor ceil round trunc fmod fmin fmax fma isnan isinf isfinite signbit copysign nan
sinf cosf tanf sinhf coshf tanhf expf logf powf sqrtf fabsf floorf ceilf roundf fmodf fminf fmaxf fmaf
`) {
		m[w] = true
	}
	return m
}()

// commentText renders s for a C /* */ comment: ASCII letters, digits and
// " .,:-+=()[]@#/" stay; every other byte (including '*', '\\', newlines,
// '?' and the bytes of non-ASCII runes) is written as \xNN. The result can
// contain neither "*/" nor "/*" nor a line splice nor a trigraph.
func commentText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" .,:-+=()[]@#/_", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, `\x%02x`, c)
	}
	return b.String()
}

// floatLit prints a float32 constant as a C literal that reads back to the
// same float32: the shortest decimal with an "f" suffix ("0.5f", "2.0f",
// "1e-07f"), or RX_INF and (-RX_INF) (rx_runtime.h) for a literal that
// rounds to ±Inf in float32, or (RX_INF - RX_INF), a NaN, for a NaN.
func floatLit(f float64) string {
	v := float32(f)
	switch {
	case v != v:
		return "(RX_INF - RX_INF)"
	case math.IsInf(float64(v), 1):
		return "RX_INF"
	case math.IsInf(float64(v), -1):
		return "(-RX_INF)"
	}
	s := strconv.FormatFloat(float64(v), 'g', -1, 32)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s + "f"
}

// intLit prints an int64 constant: plain decimal when it fits in 32 bits
// (so `round_idx < 4`), INT64_C(v) otherwise, INT64_MIN for the minimum.
func intLit(v int64) string {
	switch {
	case v == math.MinInt64:
		return "INT64_MIN"
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return strconv.FormatInt(v, 10)
	}
	return "INT64_C(" + strconv.FormatInt(v, 10) + ")"
}
