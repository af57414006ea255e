/* fuzz_dump: the annotated dump path, NNN_DECODE_KEEP_GOING with a visitor
 * that formats every field as `nnnkit dump` does and checks that fields lie
 * inside the input, in order, without overlap or gap (fz_check_dump). */
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
	fz_harness_input("fuzz_dump", data, len);
	return 0;
}
