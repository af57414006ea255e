/* fuzz_decode: decode + validate from bytes, and encode(decode(x)) == x for
 * every input the decoder accepts (fuzz/checks.c, fz_check_decode). */
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
	fz_harness_input("fuzz_decode", data, len);
	return 0;
}
