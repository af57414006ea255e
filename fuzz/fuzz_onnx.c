/* fuzz_onnx: the ONNX importer (nnn_onnx_decode) on untrusted bytes: a
 * failure leaves no model and well-formed problems; an accepted model
 * encodes, and its bytes decode and encode back to the same bytes
 * (fz_check_onnx). */
#include "checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	fz_harness_input("fuzz_onnx", data, len);
	return 0;
}
