/* Test-only fault with state: linked with -Wl,--wrap=tanh into the
 * runtime (its plain C kernels, RXEQ_NATIVE_ISA=c), tanh writes through a
 * null pointer once the process has computed more than 3000 of them, as a
 * leak that runs out would. A program that computes fewer runs fine in a
 * worker of its own, and may crash in a worker shared with other programs
 * that computed some before it: a crash a shared worker must not blame on
 * it. */
double __real_tanh(double);

static volatile long calls;

double __wrap_tanh(double x) {
	if (++calls > 3000)
		*(volatile int *)0 = 0;
	return __real_tanh(x);
}
