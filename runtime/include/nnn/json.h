/* nnn/json.h: a model as JSON text and back (docs/json.md).
 *
 * The JSON form is the schema's: one object per record, its fields named and
 * ordered as in docs/format.md, the fields an ID selects (a Dense layer's
 * neurons, Leaky ReLU's tau) beside that ID, layers in file order. Nothing
 * here names a field: the walk follows the record descriptors generated from
 * the schema (nnn/types.h), a plugin's own types included. Enum values are
 * written by name and read by name or number.
 *
 * .nnn -> JSON -> .nnn gives back the same bytes. A float is written in the
 * shortest form that reads back to the same bits; the strings "inf", "-inf",
 * "nan" (0x7fc00000) and "nan:0xXXXXXXXX" (any other NaN, sign and payload
 * kept) stand for what JSON numbers cannot hold; -0.0 is written "-0.0".
 * A u64 above 2^63-1 is written as a string of digits.
 *
 * Any array of numbers may instead be a .npy file beside the JSON:
 *   "data": {"npy": "model.tensors/layers.0.weights.npy", "shape": [3, 2], "dtype": "float32"}
 * ("shape" and "dtype" are optional when reading, and checked against the
 * file when present). The dtype is the array's element type: "float16"
 * ('<f2'), "int8" ('|i1'), ...; "bfloat16" for a bfloat16 array, whose
 * file holds the raw bits as '<u2' (NumPy has no bfloat16). A float32
 * array takes a file of any dtype the reader knows, converted (nnn/npy.h);
 * an array of another element type takes its own dtype, or one that widens
 * to it exactly (float16 into a float64 array, int8 into int16): any other
 * is NNN_E_ENUM, naming the dtype found and the one expected. A file is read once however many references name it,
 * by whatever name (known by device and inode: a link, "./x.npy"), and every
 * tensor that names it shares its data. The references of one text may fill
 * at most 64 MiB plus 4 times the bytes of the distinct files' data (as
 * the file holds it), each reference counted: the model holds every reference's copy
 * once written. Past that is NNN_E_LIMIT at the reference that passes it.
 *
 * Reading stops at the first problem. Every problem has a status code, the
 * field path, and the line and column in the text (nnn_diag_t.line):
 *   NNN_E_JSON          not JSON (jansson's message), or a duplicate key
 *   NNN_E_JSON_MISSING  a required field is absent
 *   NNN_E_JSON_UNKNOWN  a key that is no field of the record
 *   NNN_E_JSON_TYPE     a value of the wrong kind (a string for an integer...)
 *   NNN_E_RANGE         an integer outside its type, a float outside float32,
 *                       a const or count field with another value
 *   NNN_E_ENUM          a name that is no value of the enum
 *   NNN_E_UNKNOWN_ID    a layer or activation ID (or name) neither the schema
 *                       nor a loaded plugin provides
 *   NNN_E_PLUGIN        a plugin type without field descriptors (ABI 1.0)
 *   NNN_E_DIM_NEGATIVE, NNN_E_DIM_OVERFLOW, NNN_E_DIM_MISMATCH
 *                       a tensor's dims against its data count
 *   NNN_E_LIMIT         .npy references past the cap above, or a file of
 *                       more values than a tensor holds
 *   the .npy reader's codes (nnn/npy.h), NNN_E_IO, NNN_E_NOMEM
 */
#ifndef NNN_JSON_H
#define NNN_JSON_H

#include <nnn/api.h>
#include <nnn/context.h>

typedef struct nnn_json_write_opts {
	/* Arrays of numbers of at least tensors_min values go to .npy files in
	 * this folder, each of its element type's dtype (nnn/npy.h), created if
	 * missing, files written atomically; NULL: all inline. */
	const char *tensors_dir;
	int64_t tensors_min;
	/* Where the JSON will be: .npy references are relative to its folder.
	 * NULL: the current folder. */
	const char *json_path;
	/* Called for each .npy file written: the tensor's field path
	 * ("layers[0].weights"), the file as referenced, its shape. May be NULL. */
	void (*on_npy)(void *ctx, const char *path, const char *file, const nnn_shape_t *shape);
	void *ctx;
	/* Every float array written as null (its dims stay): the fields without
	 * the values, as ONNX export keeps them in its metadata (nnn/onnx.h).
	 * Such text does not read back as a model until the arrays are filled. */
	bool omit_floats;
	/* When set, called for each .npy file instead of on_npy, with the dtype
	 * its reference names: the tensor's element type ("float32", "float16",
	 * "int8", ...; "bfloat16" for a bfloat16 tensor, whose file holds the
	 * raw bits as '<u2', NumPy having no bfloat16). */
	void (*on_npy_typed)(void *ctx, const char *path, const char *file, const nnn_shape_t *shape,
	                     const char *dtype);
} nnn_json_write_opts_t;

/* Writes m as JSON (opts may be NULL) into a new NUL-terminated buffer:
 * returned in *text (free it with free()) and *len (without the NUL). */
NNN_API NNN_NODISCARD nnn_status_t nnn_json_encode(const nnn_model_t *m, const nnn_json_write_opts_t *opts, char **text,
                                                   size_t *len, nnn_diags_t *diags);

/* The same, into `path` through nnn_write_atomic (file.h: "-" is standard
 * output); opts->json_path defaults to `path`. */
NNN_API NNN_NODISCARD nnn_status_t nnn_json_write_file(const nnn_model_t *m, const char *path,
                                                       const nnn_json_write_opts_t *opts, nnn_diags_t *diags);

/* Read flags. */
enum {
	/* A build spec (nnnkit build): a friendlier subset of the JSON form.
	 * Fields may be left out except tensors: numbers default to 0, booleans to
	 * false, strings to "", enums to 0, records to their defaults; the
	 * parameter count is computed; an int field a "dims" rule ties to a
	 * tensor (a Dense layer's neurons) is taken from that tensor; a tensor's
	 * dims come from its .npy file (else [count]). A tensor may be written as
	 * the name of its .npy file, and a record whose first field is an ID as
	 * the ID's name: "activation": "relu". */
	NNN_JSON_SPEC = 1u << 0,
};

typedef struct nnn_json_read_opts {
	unsigned flags;        /* NNN_JSON_* */
	const nnn_ctx_t *ctx;  /* plugins for IDs the schema lacks; may be NULL */
	const char *base_dir;  /* .npy references are relative to it; NULL: the current folder */
} nnn_json_read_opts_t;

/* Reads the JSON form (opts may be NULL). On success *out is a new model
 * with memory of its own: returned, free it with nnn_model_free. On failure
 * *out is NULL and the problem is appended to `diags` (may be NULL). */
NNN_API NNN_NODISCARD nnn_status_t nnn_json_decode(const char *text, size_t len, const nnn_json_read_opts_t *opts,
                                                   nnn_model_t **out, nnn_diags_t *diags);

/* The same from a file; base_dir defaults to the file's folder. */
NNN_API NNN_NODISCARD nnn_status_t nnn_json_read_file(const char *path, const nnn_json_read_opts_t *opts,
                                                      nnn_model_t **out, nnn_diags_t *diags);

/* Gives every problem in diags->v[from..] that has a field path but no line
 * the line and column of that path's value in `text` (or of its deepest
 * ancestor there): for the validator's problems with a model read from text. */
NNN_API void nnn_json_locate(const char *text, size_t len, nnn_diags_t *diags, size_t from);

#endif
