/* fuzz_npy: the .npy reader (nnn_npy_read_mem), and for every array it
 * reads, nnn_npy_encode then read back: the same shape and bits
 * (fz_check_npy). */
#include "checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	fz_harness_input("fuzz_npy", data, len);
	return 0;
}
