/* fuzz_run: for every accepted model within the size caps of checks.h,
 * shape inference (validator and kernels, which must agree) and runs on
 * small deterministic inputs, with the builtin plugin loaded once from
 * $NNN_BUILD/plugins/builtin.so (else build/plugins/builtin.so). Errors are
 * fine; crashes, sanitizer reports and disagreements are not (fz_check_run). */
#include <stdio.h>
#include <stdlib.h>

#include "checks.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[FZ_WHY_MAX];
	(void)argc, (void)argv;
	fz_harness_init();
	/* Loaded once here (fz_run_ctx keeps it): a plugin that cannot load
	 * stops the run before the first input. */
	if (!fz_run_ctx(why, sizeof why)) {
		fprintf(stderr, "fuzz_run: %s\n", why);
		exit(2);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	fz_harness_input("fuzz_run", data, len);
	return 0;
}
