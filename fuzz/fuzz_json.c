/* fuzz_json: the JSON reader (nnn_json_decode), strict and as a build spec;
 * for every model it accepts, encode, and JSON -> model again: the same bytes
 * (fz_check_json). */
#include <stdio.h>
#include <stdlib.h>

#include "checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char why[FZ_WHY_MAX];
	if (fz_check_json(data, len, why, sizeof why)) {
		fprintf(stderr, "fuzz_json: invariant broken on a %zu-byte input: %s\n", len, why);
		abort();
	}
	return 0;
}
