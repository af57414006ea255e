/* fuzz_json: the JSON reader (nnn_json_decode), strict and as a build spec;
 * for every model it accepts, encode, and JSON -> model again: the same bytes
 * (fz_check_json). */
#include "checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	fz_harness_input("fuzz_json", data, len);
	return 0;
}
