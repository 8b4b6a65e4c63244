/* Test-only fault: linked with -Wl,--wrap=tanh (or tanhf), every tanh call
 * of the runtime (its plain C kernels, RXEQ_NATIVE_ISA=c) lands here and
 * writes through a null pointer. */
double __wrap_tanh(double x) {
	*(volatile int *)0 = 0;
	return x;
}

float __wrap_tanhf(float x) {
	*(volatile int *)0 = 0;
	return x;
}
