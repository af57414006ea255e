/* fuzz_npy: the .npy reader (nnn_npy_read_mem), and for every array it
 * reads, nnn_npy_encode then read back: the same shape and bits
 * (fz_check_npy). */
#include <stdio.h>
#include <stdlib.h>

#include "checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char why[FZ_WHY_MAX];
	if (fz_check_npy(data, len, why, sizeof why)) {
		fprintf(stderr, "fuzz_npy: invariant broken on a %zu-byte input: %s\n", len, why);
		abort();
	}
	return 0;
}
