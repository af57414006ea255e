/* fuzz_dump: the annotated dump path, NNN_DECODE_KEEP_GOING with a visitor
 * that formats every field as `nnnkit dump` does and checks that fields lie
 * inside the input, in order, without overlap or gap (fz_check_dump). */
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
	if (fz_check_dump(data, len, why, sizeof why)) {
		fprintf(stderr, "fuzz_dump: invariant broken on a %zu-byte input: %s\n", len, why);
		abort();
	}
	return 0;
}
