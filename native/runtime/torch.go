package runtime

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed csrc/rx_aten.cc
var aten string

// ErrNoTorch is wrapped by Torch's error when libtorch's headers or
// libraries are missing: the torch runtime cannot be built on this machine.
var ErrNoTorch = errors.New("libtorch not found (install the Debian package libtorch-dev: apt-get install --no-install-recommends libtorch-dev)")

// torchCXXFlags are the flags rx_aten.cc is compiled with (after the
// include paths of TorchInstall).
var torchCXXFlags = []string{"-std=c++17", "-O2", "-fPIC", "-ffp-contract=off", "-Wall", "-Werror"}

// torchLibs are the libtorch libraries the runtime links, in order.
var torchLibs = []string{"torch", "torch_cpu", "c10"}

// TorchInstall is where libtorch was found.
type TorchInstall struct {
	// Include is the directory that holds ATen/, c10/ and torch/.
	Include string
	// LibDir holds libtorch.so, libtorch_cpu.so and libc10.so.
	LibDir string
	// Version is libtorch's version (TORCH_VERSION of torch/version.h),
	// followed by the resolved name of libtorch_cpu.so and a digest of the
	// version header, so that a rebuilt libtorch of the same version gives
	// another cache key.
	Version string
}

// The places a Debian (or a /usr/local) libtorch is looked for.
var (
	torchIncludeDirs = []string{"/usr/include", "/usr/local/include"}
	torchLibDirs     = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"}
)

var versionRE = regexp.MustCompile(`#define\s+TORCH_VERSION\s+\\?\s*"([^"]+)"`)

// FindTorch looks for libtorch's headers (ATen/ATen.h, torch/version.h) and
// libraries (libtorch.so, libtorch_cpu.so, libc10.so) in the usual places.
// The error wraps ErrNoTorch and says what is missing.
//
// root, when not "", replaces those places with one prefix (its include/
// and lib/ directories), for a libtorch unpacked elsewhere; a prefix
// without libtorch makes the torch runtime unavailable. (The rxeq command
// takes it from $RXEQ_TORCH_ROOT.)
func FindTorch(root string) (TorchInstall, error) {
	var in TorchInstall
	var verText []byte
	includeDirs, libDirs := torchIncludeDirs, torchLibDirs
	if root != "" {
		includeDirs = []string{filepath.Join(root, "include")}
		libDirs = []string{filepath.Join(root, "lib"), filepath.Join(root, "lib", "x86_64-linux-gnu"), filepath.Join(root, "lib", "aarch64-linux-gnu")}
	}
	for _, d := range includeDirs {
		vh := filepath.Join(d, "torch", "csrc", "api", "include", "torch", "version.h")
		if _, err := os.Stat(filepath.Join(d, "ATen", "ATen.h")); err != nil {
			continue
		}
		b, err := os.ReadFile(vh)
		if err != nil {
			continue
		}
		in.Include, verText = d, b
		break
	}
	if in.Include == "" {
		return in, fmt.Errorf("%w: no ATen/ATen.h and torch/csrc/api/include/torch/version.h under %s", ErrNoTorch, strings.Join(includeDirs, ", "))
	}
	for _, d := range libDirs {
		ok := true
		for _, l := range torchLibs {
			if _, err := os.Stat(filepath.Join(d, "lib"+l+".so")); err != nil {
				ok = false
				break
			}
		}
		if ok {
			in.LibDir = d
			break
		}
	}
	if in.LibDir == "" {
		return in, fmt.Errorf("%w: no libtorch.so, libtorch_cpu.so and libc10.so together in %s", ErrNoTorch, strings.Join(libDirs, ", "))
	}
	ver := "unknown"
	if m := versionRE.FindSubmatch(verText); m != nil {
		ver = string(m[1])
	}
	cpu, err := filepath.EvalSymlinks(filepath.Join(in.LibDir, "libtorch_cpu.so"))
	if err != nil {
		return in, fmt.Errorf("%w: %v", ErrNoTorch, err)
	}
	size := int64(-1)
	if fi, err := os.Stat(cpu); err == nil {
		size = fi.Size()
	}
	sum := sha256.Sum256(verText)
	in.Version = fmt.Sprintf("libtorch %s (%s, %d bytes; version.h %s)", ver, filepath.Base(cpu), size, hex.EncodeToString(sum[:6]))
	return in, nil
}

// Torch returns the runtime whose float kernels are libtorch's ATen ops
// (rx_context.c compiled as C, rx_aten.cc as C++17, linked against
// -ltorch -ltorch_cpu -lc10), or an error wrapping ErrNoTorch. root is
// FindTorch's.
func Torch(root string) (Lib, error) {
	in, err := FindTorch(root)
	if err != nil {
		return Lib{}, err
	}
	return TorchAt(in), nil
}

// TorchAt returns the torch runtime for the libtorch installation in.
func TorchAt(in TorchInstall) Lib {
	flags := append([]string(nil), torchCXXFlags...)
	if in.Include != "/usr/include" {
		flags = append(flags, "-isystem", in.Include)
	}
	flags = append(flags, "-isystem", filepath.Join(in.Include, "torch", "csrc", "api", "include"))
	link := []string{"-L" + in.LibDir, "-Wl,-rpath," + in.LibDir}
	for _, l := range torchLibs {
		link = append(link, "-l"+l)
	}
	return Lib{
		Name: "torch",
		Files: []File{
			{HeaderName, header},
			{"rx_internal.h", internal},
			{"rx_context.c", context},
			{"rx_aten.cc", aten},
		},
		CSources:   []string{"rx_context.c"},
		CXXSources: []string{"rx_aten.cc"},
		CXXFlags:   flags,
		LinkFlags:  link,
		Version:    in.Version,
	}
}
