package pyexport_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/pyexport"
)

var _ = Describe("a loop count the body assigns", func() {
	It("runs max(n, 0) iterations in the exported module, eagerly, under TorchScript and in NumPy", func() {
		p := irtest.CountAssignedInBody()
		t, n := export(p, pyexport.Torch), export(p, pyexport.NumPy)
		needPython("numpy", "torch")
		want := "4 4.5 1 1.5 0 0.5 0 0.5\n"
		out := runPython(t, `
import torch, gen
s = torch.jit.script(gen.f)
for fn in (gen.f, s):
    r = []
    for k in (4, 1, 0, -3):
        iters, y = fn(k, torch.tensor([0.5], dtype=torch.float32))
        r.append("%d %g" % (int(iters), float(y[0])))
    print(" ".join(r))
`)
		Expect(out).To(Equal(want + want))
		out = runPython(n, `
import numpy as np, gen
r = []
for k in (4, 1, 0, -3):
    iters, y = gen.f(k, np.array([0.5], dtype=np.float32))
    r.append("%d %g" % (int(iters), float(y[0])))
print(" ".join(r))
`)
		Expect(out).To(Equal(want))
	})

	It("runs the .rx pattern (a local count decremented in its loop) with max(count, 0) trips", func() {
		_, p := parse("count.rx", irtest.CountAssignedSource)
		needPython("numpy", "torch")
		var want []string
		for _, k := range []int64{3, -1, -2, -9} {
			trips, after, added := irtest.CountAssignedWant(k)
			want = append(want, fmt.Sprintf("%d %d %g", trips, after, 0.5+added))
		}
		script := `
import gen
r = []
for k in (3, -1, -2, -9):
    y, trips, after = gen.f(%s, k)
    r.append("%%d %%d %%g" %% (int(trips), int(after), float(y[0])))
print(" ".join(r))
`
		Expect(runPython(export(p, pyexport.Torch), fmt.Sprintf("import torch\n"+script, "torch.tensor([0.5], dtype=torch.float32)"))).
			To(Equal(strings.Join(want, " ") + "\n"))
		Expect(runPython(export(p, pyexport.NumPy), fmt.Sprintf("import numpy as np\n"+script, "np.array([0.5], dtype=np.float32)"))).
			To(Equal(strings.Join(want, " ") + "\n"))
	})
})
