/* fuzz_decode: decode + validate from bytes, and encode(decode(x)) == x for
 * every input the decoder accepts (fuzz/checks.c, fz_check_decode). */
#include <stdio.h>
#include <stdlib.h>

#include "checks.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fz_harness_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char why[FZ_WHY_MAX];
	if (fz_check_decode(data, len, why, sizeof why)) {
		fprintf(stderr, "fuzz_decode: invariant broken on a %zu-byte input: %s\n", len, why);
		abort();
	}
	return 0;
}
