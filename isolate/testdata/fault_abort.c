/* Test-only fault: linked with -Wl,--wrap=tanhf, every tanhf call of the
 * generated code aborts. */
#include <stdio.h>
#include <stdlib.h>

float __wrap_tanhf(float x) {
	fprintf(stderr, "fault_abort: tanhf(%g) called\n", (double)x);
	abort();
	return x;
}
