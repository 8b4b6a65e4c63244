/* Test-only fault: linked with -Wl,--wrap=tanhf, every tanhf call of the
 * generated code lands here and writes through a null pointer. */
float __wrap_tanhf(float x) {
	*(volatile int *)0 = 0;
	return x;
}
