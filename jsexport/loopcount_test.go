package jsexport_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir/irtest"
)

var _ = Describe("a loop count the body assigns", func() {
	// A JavaScript for re-reads its condition's bound on every trip, so
	// the module copies a count that is not a literal into _nN first.
	It("is copied before the loop, so the loop's condition never reads the variable", func() {
		_, p := parse("count.rx", irtest.CountAssignedSource)
		mod := export(p)
		Expect(mod).To(MatchRegexp(`_n1 = n;\n\s*for \(let _i1 = 0n; _i1 < _n1; _i1\+\+\) \{`))
		Expect(mod).To(MatchRegexp(`_n2 = m;\n\s*for \(let _i2 = 0n; _i2 < _n2; _i2\+\+\) \{`))
		Expect(mod).NotTo(ContainSubstring("< n;"))
		Expect(mod).NotTo(ContainSubstring("< m;"))
	})

	It("runs max(count, 0) trips in TensorFlow.js, as in Go", func() {
		needTFJS()
		_, p := parse("count.rx", irtest.CountAssignedSource)
		script := `'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const m = require('./count_tfjs.js');
tf.setBackend('cpu').then(() => {
  const lines = [];
  for (const k of [3n, -1n, -2n, -9n]) {
    // A fresh x each time: with no trip, y is x itself.
    const o = m.f(tf.tensor([0.5, -1], [2], 'float32'), k);
    lines.push([o.trips, o.after, Array.from(o.y.dataSync()).join(',')].join(' '));
    o.y.dispose();
  }
  process.stdout.write(lines.join('\n'));
});
`
		stdout, stderr, code := runNode(map[string]string{"count_tfjs.js": export(p), "main.js": script})
		Expect(code).To(Equal(0), stderr)
		var want []string
		for _, k := range []int64{3, -1, -2, -9} {
			trips, after, added := irtest.CountAssignedWant(k)
			want = append(want, fmt.Sprintf("%d %d %g,%g", trips, after, 0.5+added, -1+added))
		}
		Expect(strings.Split(stdout, "\n")).To(Equal(want))
	})
})
