/* Test-only fault with state: linked with -Wl,--wrap=exp -Wl,--wrap=tanh
 * into the runtime (its plain C kernels, RXEQ_NATIVE_ISA=c), an exp call
 * marks the process and a tanh call in a marked process writes through a
 * null pointer. A program calling Tanh then runs fine in a worker of its
 * own but crashes in a worker where a program calling Exp ran before: the
 * crash is the earlier program's doing, and a worker shared between
 * programs must not blame it on the later one. */
double __real_exp(double);
double __real_tanh(double);

static volatile int marked;

double __wrap_exp(double x) {
	marked = 1;
	return __real_exp(x);
}

double __wrap_tanh(double x) {
	if (marked)
		*(volatile int *)0 = 0;
	return __real_tanh(x);
}
