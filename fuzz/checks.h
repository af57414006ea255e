/* fuzz/checks.h: the invariants the fuzz harnesses check, shared with the
 * regression replay (tests/unit/test_regress.c includes fuzz/checks.c) so a crash
 * input saved under tests/regress/<harness>/ is replayed through exactly the
 * same code by `make test`.
 *
 * Each check takes one input and returns 0 when every invariant holds, or 1
 * with a message in `why` naming the invariant that broke. Memory errors and
 * undefined behaviour are left to the sanitizers (the harnesses are built
 * with -fsanitize=fuzzer,address,undefined; `make test-asan` replays the
 * regression files under ASan and UBSan too).
 */
#ifndef NNN_FUZZ_CHECKS_H
#define NNN_FUZZ_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include <nnn/context.h>

/* Room for a `why` message. */
#define FZ_WHY_MAX 2048

/* Caps on the work one fuzz_run input may cost; bigger models are skipped. */
#define FZ_RUN_MAX_PARAMS ((uint64_t)1 << 20)        /* parameter values */
#define FZ_RUN_MAX_TENSOR_BYTES ((uint64_t)1 << 20)  /* any planned tensor (max_tensor_bytes) */
#define FZ_RUN_MAX_INPUT ((int64_t)1 << 16)          /* input elements */
#define FZ_RUN_MAX_MACS ((uint64_t)1 << 24)          /* multiply-adds of one forward pass */

/* decode + validate from bytes: nnn_model_decode strict, with
 * NNN_DECODE_COPY (from a copy of the bytes freed before the model is
 * used) and with NNN_DECODE_KEEP_GOING; nnn_file_open of the bytes in a
 * file (TMPDIR or /tmp), which must agree; nnn_validate_bytes; and for every
 * accepted input, encode(decode(x)) == x byte for byte, from both models. */
int fz_check_decode(const uint8_t *data, size_t len, char *why, size_t size);

/* The annotated dump path: NNN_DECODE_KEEP_GOING with a visitor that
 * formats every field as `nnnkit dump` does and checks each lies inside the
 * input, in increasing offset order, without overlap or gap. */
int fz_check_dump(const uint8_t *data, size_t len, char *why, size_t size);

/* Shape inference and a run on a small input for every accepted model whose
 * size is within the FZ_RUN_* caps, with the kernels of `ctx`. */
int fz_check_run(const nnn_ctx_t *ctx, const uint8_t *data, size_t len, char *why, size_t size);

/* The .npy reader, and writer -> reader round trips of what it read. */
int fz_check_npy(const uint8_t *data, size_t len, char *why, size_t size);

/* The JSON reader, strict and as a build spec (.npy references resolved in
 * a folder that does not exist): a failure has exactly one problem, with the
 * status's code and a line; an accepted model encodes, and its JSON form
 * reads back (strictly) to the same bytes. */
int fz_check_json(const uint8_t *data, size_t len, char *why, size_t size);

/* The ONNX importer: a failure leaves no model and well-formed problems,
 * the note is terminated; an accepted model encodes, and its bytes decode
 * and encode back to the same bytes. */
int fz_check_onnx(const uint8_t *data, size_t len, char *why, size_t size);

/* The context fz_check_run uses, created once per process: the builtin
 * plugin from $NNN_BUILD/plugins/builtin.so, else build/plugins/builtin.so.
 * NULL (with why set) when it cannot be loaded. */
const nnn_ctx_t *fz_run_ctx(char *why, size_t size);

/* 1 in how many inputs with an unknown ID is decoded with diags, which
 * probes (see checks.c); 1 (the default, used by the replay) means all. */
extern unsigned fz_probe_every;

/* For a harness's LLVMFuzzerInitialize: sets fz_probe_every from
 * NNN_FUZZ_PROBE_EVERY (default 256). */
void fz_harness_init(void);

/* The check of harness `name` ("fuzz_decode", "fuzz_dump", "fuzz_run",
 * "fuzz_npy", "fuzz_json", "fuzz_onnx"); -1 for an unknown name or when fuzz_run has no
 * context. */
int fz_check(const char *name, const uint8_t *data, size_t len, char *why, size_t size);

/* A harness's LLVMFuzzerTestOneInput: the check of harness `name` (fz_check)
 * on one input; when an invariant breaks, prints "<name>: invariant broken on
 * a <len>-byte input: <why>" on stderr and aborts, so that libFuzzer saves the
 * input. */
void fz_harness_input(const char *name, const uint8_t *data, size_t len);

#endif
