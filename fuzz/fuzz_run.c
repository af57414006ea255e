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

static const nnn_ctx_t *g_ctx; /* test code: one context for the process */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[FZ_WHY_MAX];
	(void)argc, (void)argv;
	fz_harness_init();
	g_ctx = fz_run_ctx(why, sizeof why);
	if (!g_ctx) {
		fprintf(stderr, "fuzz_run: %s\n", why);
		exit(2);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char why[FZ_WHY_MAX];
	if (fz_check_run(g_ctx, data, len, why, sizeof why)) {
		fprintf(stderr, "fuzz_run: invariant broken on a %zu-byte input: %s\n", len, why);
		abort();
	}
	return 0;
}
