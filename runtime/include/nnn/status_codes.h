/* nnn/status_codes.h: the status codes and the sizes of a problem's
 * texts. Types and constants only, no function: <nnn/plugin.h> includes it
 * (a plugin returns these codes), and <nnn/status.h> adds libnnn's
 * functions over them and the diagnostics. Codes have pinned numbers: they
 * are part of the ABI and of the conformance manifest.
 */
#ifndef NNN_STATUS_CODES_H
#define NNN_STATUS_CODES_H

#include <stdint.h>

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
	  "the message says what to change; docs/onnx.md says what nnnkit reads")          \
	X(E_ONNX_OP, 61, "ONNX node outside what nnnkit converts",                          \
	  "docs/onnx.md lists every op and attribute nnnkit maps")                          \
	X(E_ONNX_EXPORT, 62, "layer ONNX export cannot express",                            \
	  "docs/onnx.md says what exports; a plugin type needs an export hook")

typedef enum nnn_status {
#define NNN_STATUS_ENUM_(name, num, desc, fix) NNN_##name = num,
	NNN_STATUS_LIST(NNN_STATUS_ENUM_)
#undef NNN_STATUS_ENUM_
} nnn_status_t;

/* A field path's and a message's room, terminator included. */
#define NNN_PATH_MAX 192
#define NNN_MSG_MAX 384

/* A problem's byte offset where none applies. */
#define NNN_NO_OFFSET UINT64_MAX

#endif
