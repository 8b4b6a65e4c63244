/* Test-only fault: linked with -Wl,--wrap=tanhf, every tanhf call of the
 * generated code spins forever. */
float __wrap_tanhf(float x) {
	for (;;) {
		__asm__ volatile("");
	}
	return x;
}
