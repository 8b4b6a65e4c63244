/* Test-only fault for the torch runtime: linked into it with
 * -Wl,--wrap=_ZN2at4_ops8tanh_out4callERKNS_6TensorERS2_ (libtorch 1.13's
 * at::_ops::tanh_out::call), every Tanh's call into ATen lands here and
 * writes through a null pointer, as a crash inside ATen would. */
void *__wrap__ZN2at4_ops8tanh_out4callERKNS_6TensorERS2_(void *self, void *out)
{
	(void)self;
	*(volatile int *)0 = 0;
	return out;
}
