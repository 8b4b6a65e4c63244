/* Test-only fault: linked with -Wl,--wrap=tanh (or tanhf), every tanh call
 * of the runtime (its plain C kernels, RXEQ_NATIVE_ISA=c) spins forever. */
double __wrap_tanh(double x) {
	for (;;) {
		__asm__ volatile("");
	}
	return x;
}

float __wrap_tanhf(float x) {
	for (;;) {
		__asm__ volatile("");
	}
	return x;
}
