/* nnn/npy.h: read and write NumPy .npy files as float32 arrays, or as
 * arrays of the file's own element type (nnn_npy_typed_t: a tensor of any
 * element type the schema declares, byte for byte).
 *
 * The reader takes format versions 1.0, 2.0 and 3.0, C order, and the
 * little-endian dtypes '<f2', '<f4', '<f8', '|i1', '|u1', '<i2', '<u2',
 * '<i4', '<u4', '<i8', '<u8' and '|b1'. The float32 readers convert them
 * (inputs and labels come in all of these), rounding to nearest: integers
 * past 2^24 and float64 values lose precision; a finite float64 past
 * float32's range is an error. The typed readers keep the bytes. It parses the header dict strictly
 * (exactly the keys 'descr', 'fortran_order' and 'shape', in any order, with
 * any whitespace), checks the data size against the shape before allocating
 * anything, and rejects trailing bytes.
 *
 * The writer writes what numpy.save writes for a C-ordered float32 array,
 * byte for byte: a version 1.0 header padded to a multiple of 64 bytes.
 *
 * Problems go to `diags` (may be NULL) with the field as the path ("magic",
 * "version", "header_len", "header", "descr", "fortran_order", "shape",
 * "shape[1]", "data", "data[7]") and the byte offset in the .npy file:
 *   NNN_E_MAGIC        not \x93NUMPY, an unknown version, a malformed header
 *   NNN_E_TRUNCATED    the file ends inside the header or the data
 *   NNN_E_ENUM         descr not one of the above (big-endian, complex, ...)
 *                      or fortran_order True; nnn_npy_typed_as: a dtype that
 *                      is not the field's
 *   NNN_E_SHAPE        shape not a tuple of integers
 *   NNN_E_LIMIT        more than NNN_MAX_RANK dimensions
 *   NNN_E_DIM_NEGATIVE a negative dimension
 *   NNN_E_DIM_OVERFLOW the dimension product does not fit in int64
 *   NNN_E_DIM_MISMATCH bytes after the data the shape calls for
 *   NNN_E_RANGE        a '<f8' value too large for float32
 *   NNN_E_BOOL         a '|b1' byte other than 0 or 1
 *   NNN_E_IO, NNN_E_NOMEM, NNN_E_USAGE (a NULL argument)
 */
#ifndef NNN_NPY_H
#define NNN_NPY_H

#include <nnn/api.h>
#include <nnn/status.h>
#include <nnn/types.h>

/* A float32 array in host byte order, C order: count is the product of the
 * shape's dims (1 for rank 0). Owned: release with nnn_npy_free. After a
 * successful read, data is never NULL, even when count is 0. */
typedef struct nnn_npy {
	nnn_shape_t shape;
	float *data;
	size_t count;
} nnn_npy_t;

/* Decodes the `len` bytes at `buf` (copied: buf may go away afterwards).
 * On failure *out is zeroed. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_read_mem(const void *buf, size_t len, nnn_npy_t *out, nnn_diags_t *diags);

/* Reads the file at `path`; "-" reads standard input to its end. Regular
 * files are mapped, pipes and devices read to EOF. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_read_file(const char *path, nnn_npy_t *out, nnn_diags_t *diags);

/* A read-only view of the array in a .npy file, for inputs too large to
 * hold twice. When the file holds '<f4' on a little-endian host, `data`
 * points into the file's bytes (in_place = 1: nothing copied; a regular
 * file is mapped and its pages read as they are used, a pipe is read once);
 * any other dtype is converted into a new buffer as nnn_npy_read_file
 * does. Same checks, errors and "-" as nnn_npy_read_file.
 * Owned: release with nnn_npy_unmap; `data` is valid until then, and, as
 * with nnn_file_open, the file must not be truncated while mapped. */
typedef struct nnn_npy_view {
	nnn_shape_t shape;
	const float *data;
	size_t count;
	int in_place;
	/* The file's dtype, as numpy names it ("float32", "float64", "int32",
	 * "int64", "uint8", "bool", "float16", ...; static storage), and numpy's kind of it
	 * ('f' float, 'i' signed or 'u' unsigned integer, 'b' bool): what the
	 * values were before they became float32 (a caller may warn about
	 * unscaled integer inputs, say). */
	const char *dtype;
	char kind;
	/* private: what nnn_npy_unmap releases */
	const void *base_;
	size_t base_size_;
	int base_mapped_;
} nnn_npy_view_t;

/* On failure *out is zeroed. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_map(const char *path, nnn_npy_view_t *out, nnn_diags_t *diags);

/* Releases the view and zeroes *v; NULL and a zeroed view are harmless. */
NNN_API void nnn_npy_unmap(nnn_npy_view_t *v);

/* Writes `data` (the product of shape's dims floats, C order; may be NULL
 * when that product is 0) as a float32 .npy file, through nnn_write_atomic
 * (file.h): "-" is standard output, a file is replaced atomically, a FIFO
 * or a device is written in place. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_write_file(const char *path, const nnn_shape_t *shape, const float *data,
                                                      nnn_diags_t *diags);

/* The bytes nnn_npy_write_file writes, in a new buffer: returned in *buf
 * (release with free()) and *len. On failure *buf is NULL and *len 0. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_encode(const nnn_shape_t *shape, const float *data, unsigned char **buf,
                                                  size_t *len, nnn_diags_t *diags);

/* Frees the data and zeroes *a; NULL is harmless. */
NNN_API void nnn_npy_free(nnn_npy_t *a);

/* ---- typed arrays ----
 *
 * An array as the file holds it: `count` elements of `width` bytes,
 * little-endian, C order, of the file's dtype: `kind` and `width` are its
 * element type ('<f2' is NNN_EK_FLOAT, 2; '|b1' NNN_EK_BOOL, 1), `dtype`
 * its NumPy name ("float16"; static storage). NumPy has no bfloat16: a
 * bfloat16 tensor travels as its raw bits, '<u2' (NNN_EK_UINT, 2), and
 * nnn_npy_typed_as takes those back into a bfloat16 field.
 * Owned: release with nnn_npy_typed_free. After a successful read, bytes is
 * never NULL, even when count is 0. */
typedef struct nnn_npy_typed {
	nnn_shape_t shape;
	unsigned char *bytes;
	size_t count;
	nnn_ekind_t kind;
	int width;
	const char *dtype;
	size_t data_at; /* the file offset of the first element, for messages */
} nnn_npy_typed_t;

/* As nnn_npy_read_mem and nnn_npy_read_file, the same checks and errors,
 * keeping the file's element type. On failure *out is zeroed. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_read_typed_mem(const void *buf, size_t len, nnn_npy_typed_t *out,
                                                          nnn_diags_t *diags);
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_read_typed_file(const char *path, nnn_npy_typed_t *out,
                                                           nnn_diags_t *diags);

/* Frees the bytes and zeroes *a; NULL is harmless. */
NNN_API void nnn_npy_typed_free(nnn_npy_typed_t *a);

/* The dtype that holds elements of `kind` and `width`, as NumPy writes it
 * ("<f2", "|i1"; "<u2" for bfloat16), and its name ("float16", "int8";
 * "bfloat16"); NULL when none does. */
NNN_API const char *nnn_npy_descr(nnn_ekind_t kind, int width);
NNN_API const char *nnn_npy_dtype_name(nnn_ekind_t kind, int width);

/* The elements of `a` as elements of `kind` and `width` (a field's element
 * type), a->count * width little-endian bytes into `out`. Taken: the same
 * dtype, byte for byte; '<u2' into bfloat16 (its raw bits); and a widening
 * that keeps every value exactly (float16 into float32 or float64, float32
 * into float64, an int into a wider int, an unsigned int into a wider
 * unsigned or signed int). Anything else (a narrowing, float into int, int
 * into float, bool) is NNN_E_ENUM at `path` (the field's, for the message),
 * naming the dtype found and the one expected: no value is ever changed. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_typed_as(const nnn_npy_typed_t *a, nnn_ekind_t kind, int width, void *out,
                                                    const char *path, nnn_diags_t *diags);

/* The elements of `a` (as read) as float32 into `out` (a->count host
 * floats), converted as nnn_npy_read_mem converts them. */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_typed_f32(const nnn_npy_typed_t *a, float *out, nnn_diags_t *diags);

/* Writes `bytes` (the product of shape's dims elements of `kind` and
 * `width`, little-endian, C order; may be NULL when that product is 0) as
 * numpy.save writes an array of that dtype ('<u2' for bfloat16), through
 * nnn_write_atomic as nnn_npy_write_file; nnn_npy_encode_typed returns the
 * bytes in a new buffer (release with free()). */
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_write_typed_file(const char *path, const nnn_shape_t *shape,
                                                            nnn_ekind_t kind, int width, const void *bytes,
                                                            nnn_diags_t *diags);
NNN_API NNN_NODISCARD nnn_status_t nnn_npy_encode_typed(const nnn_shape_t *shape, nnn_ekind_t kind, int width,
                                                        const void *bytes, unsigned char **buf, size_t *len,
                                                        nnn_diags_t *diags);

#endif
