/* Test-only fault: linked with -Wl,--wrap=tanh (or tanhf), every tanh call
 * of the runtime (its plain C kernels, RXEQ_NATIVE_ISA=c) aborts. */
#include <stdio.h>
#include <stdlib.h>

double __wrap_tanh(double x) {
	fprintf(stderr, "fault_abort: tanh(%g) called\n", x);
	abort();
	return x;
}

float __wrap_tanhf(float x) {
	fprintf(stderr, "fault_abort: tanhf(%g) called\n", (double)x);
	abort();
	return x;
}
