/* nnn/status.h: status codes and diagnostics, shared by every libnnn module.
 *
 * Every fallible function returns an nnn_status_t and, when given one, fills
 * an nnn_diags_t with what went wrong: code, byte offset, field path, what was
 * found, what was expected and what to do about it. Codes have pinned numbers:
 * they are part of the ABI and of the conformance manifest.
 */
#ifndef NNN_STATUS_H
#define NNN_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include <nnn/api.h>

/* X(name, number, short description, remedy) */
#define NNN_STATUS_LIST(X)                                                              \
	X(OK, 0, "ok", "")                                                                  \
	X(E_IO, 1, "input/output error", "check the path and its permissions")              \
	X(E_NOMEM, 2, "out of memory", "free memory or raise the limit")                    \
	X(E_USAGE, 3, "invalid argument", "see --help")                                     \
	X(E_TRUNCATED, 10, "file ends early",                                               \
	  "the file is cut short or a count in it is corrupt: copy it again from its source") \
	X(E_MAGIC, 11, "not a .nnn file", "a .nnn file starts with the bytes 'NNN.'")       \
	X(E_COUNT_NEGATIVE, 12, "negative count",                                           \
	  "the count is corrupt: the file cannot be read past it")                          \
	X(E_BOOL, 14, "boolean byte not 0 or 1", "the byte is corrupt: write 0 or 1")       \
	X(E_UTF8, 15, "string is not valid UTF-8", "re-encode the text as UTF-8")           \
	X(E_TRAILING, 16, "bytes after the last layer",                                     \
	  "the layer count is too small or data was appended: fix the count or cut the file") \
	X(E_UNKNOWN_ID, 17, "unknown ID",                                                   \
	  "load a plugin that provides this ID (--plugin FILE or NNN_PLUGIN_PATH; "         \
	  "nnnkit plugins lists what each one found provides)")                             \
	X(E_ENUM, 18, "value outside its enumeration", "use one of the listed values")      \
	X(E_DIM_NEGATIVE, 19, "negative dimension", "dimensions must be >= 0")              \
	X(E_DIM_OVERFLOW, 20, "dimension product overflows 64 bits",                        \
	  "the dims are corrupt")                                                           \
	X(E_DIM_MISMATCH, 21, "dimension product differs from the data count",              \
	  "the dims or the data count are corrupt")                                         \
	X(E_PARAM_COUNT, 30, "parameter count differs from the tensors",                    \
	  "rewrite the header's count: nnnkit edit --fix-param-count MODEL -o OUT "         \
	  "recomputes it from the tensors")                                                 \
	X(E_SHAPE, 31, "tensor shape does not fit the layer",                               \
	  "the tensor must have the shape the layer's fields imply")                        \
	X(E_RANGE, 32, "value out of range", "use a value inside the stated range")         \
	X(E_PADDING, 33, "padding dims do not match the padding type",                      \
	  "write the padding the padding type implies for each kernel size")               \
	X(E_CHAIN, 34, "layer does not fit the previous layer's output",                    \
	  "consecutive layers must agree on their shapes")                                  \
	X(E_INPUT_SHAPE, 35, "input shape does not fit the model",                          \
	  "give an input shape the first layer accepts")                                    \
	X(E_LIMIT, 36, "a resource limit was reached", "raise the limit or simplify the input")     \
	X(E_NPY, 37, "not a .npy file nnnkit reads",                                        \
	  "save it with np.save(path, np.ascontiguousarray(x, dtype='<f4'))")               \
	X(E_SAFETENSORS, 38, "not a safetensors file nnnkit reads",                         \
	  "docs/safetensors.md says what nnnkit reads: a file nnnkit convert wrote, "       \
	  "or per tensor, saved as .npy, into nnnkit build with a spec")                   \
	X(E_PLUGIN, 40, "plugin not loaded", "nnnkit plugins -v lists every candidate and why") \
	X(E_KERNEL, 41, "kernel failed", "see the message; the layer is named")              \
	X(E_JSON, 50, "not valid JSON", "fix the text at the line and column given")         \
	X(E_JSON_MISSING, 51, "required field missing",                                     \
	  "add the field: docs/format.md lists every field, and nnnkit convert MODEL.nnn "  \
	  "OUT.json shows a complete model")                                                \
	X(E_JSON_UNKNOWN, 52, "unknown field",                                              \
	  "remove it or correct its name: the fields are those of docs/format.md")          \
	X(E_JSON_TYPE, 53, "value of the wrong kind",                                       \
	  "write it as the message says; docs/json.md shows every form")                    \
	X(E_ONNX, 60, "not an ONNX model nnnkit reads",                                     \
	  "check that the file is an ONNX model (.onnx) with its tensors inside it")        \
	X(E_ONNX_OP, 61, "ONNX node outside what nnnkit converts",                          \
	  "docs/onnx.md lists every op and attribute nnnkit maps")                          \
	X(E_ONNX_EXPORT, 62, "layer ONNX export cannot express",                            \
	  "docs/onnx.md says what exports; a plugin type needs an export hook")

typedef enum nnn_status {
#define NNN_STATUS_ENUM_(name, num, desc, fix) NNN_##name = num,
	NNN_STATUS_LIST(NNN_STATUS_ENUM_)
#undef NNN_STATUS_ENUM_
} nnn_status_t;

/* Short description of a code ("file ends early"); "unknown status" for others. */
NNN_API const char *nnn_status_str(nnn_status_t s);
/* Symbolic name without the prefix ("E_TRUNCATED"). */
NNN_API const char *nnn_status_name(nnn_status_t s);
/* What a user can do about it; "" for NNN_OK. */
NNN_API const char *nnn_status_remedy(nnn_status_t s);

#define NNN_PATH_MAX 192
#define NNN_MSG_MAX 384

/* One problem: where (byte offset or line and column, and field path), what,
 * and why. */
typedef struct nnn_diag {
	nnn_status_t code;
	uint64_t offset;            /* byte offset in the file; UINT64_MAX when none applies */
	char path[NNN_PATH_MAX];    /* "layers[2].weights.dims[1]"; "" for the whole file */
	char msg[NNN_MSG_MAX];      /* "found -3, expected >= 0" */
	uint32_t line, column;      /* in a text input (JSON), from 1; 0 when none applies */
} nnn_diag_t;

#define NNN_NO_OFFSET UINT64_MAX

/* A list of problems, in the order found. Owned by the caller: initialise with
 * nnn_diags_init (or zero it), release with nnn_diags_free. At most `limit`
 * entries are kept (0 means NNN_DIAGS_DEFAULT_LIMIT); `dropped` counts the rest. */
typedef struct nnn_diags {
	nnn_diag_t *v;
	size_t n, cap, limit, dropped;
} nnn_diags_t;

#define NNN_DIAGS_DEFAULT_LIMIT 1000

NNN_API void nnn_diags_init(nnn_diags_t *d);
NNN_API void nnn_diags_free(nnn_diags_t *d);
NNN_API void nnn_diags_clear(nnn_diags_t *d);
/* Appends a problem; `d` may be NULL (the problem is then only returned). */
NNN_API nnn_status_t nnn_diags_add(nnn_diags_t *d, nnn_status_t code, uint64_t offset, const char *path,
                                   const char *fmt, ...) NNN_PRINTF(5, 6);
/* Formats "path @0xOFFSET: description: msg (remedy)" into buf, or with a
 * line "LINE:COLUMN: path: description: msg (remedy)"; returns buf. */
NNN_API char *nnn_diag_format(const nnn_diag_t *d, char *buf, size_t size);

#endif
