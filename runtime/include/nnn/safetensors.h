/* nnn/safetensors.h: a model as safetensors and back (docs/safetensors.md).
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of
 * JSON, then a byte buffer. The JSON names each tensor with its dtype, shape
 * and data_offsets [begin, end) into the buffer; "__metadata__" is a map of
 * strings to strings.
 *
 * Writing: every array of numbers of the model but the int32 ones (dims)
 * becomes one tensor of its element type's dtype ("F32"; "F16", "BF16",
 * "I8", "U8", "I16", "U16", "U32", "I64", "U64", "F64" for the element
 * types the schema declares), named as nnnkit export names its .npy files
 * ("layers.0.weights"), with the tensor's shape (an array that is no
 * tensor's data: [count]), in file order, its bytes those of the .nnn file. The metadata carries the rest, so that
 * .nnn -> safetensors -> .nnn gives back the same bytes:
 *   "format"        "nnn"
 *   "nnn.skeleton"  base64 of the .nnn bytes with every such payload cut out
 *   "nnn.tensors"   JSON text [["name", at], ...]: each tensor's bytes go at
 *                   offset `at` of the skeleton, right after their count
 * The header is padded with spaces to a multiple of 8 bytes.
 *
 * Reading checks what the format requires before anything else: a header of
 * at most NNN_ST_HEADER_MAX bytes inside the file, starting with '{', valid
 * UTF-8 JSON without duplicate keys; every tensor a known dtype, a shape of
 * non-negative integers and data_offsets whose size is dtype x shape; the
 * tensors, ordered by offset, covering the buffer exactly (no overlap, no
 * hole, nothing past its end). Then the metadata: a file without it (a
 * Hugging Face checkpoint) is refused, its first tensors listed; a tensor of
 * a dtype .nnn has no element type for (F8_E5M2, F8_E4M3) is refused by
 * name. The tensors are spliced back
 * into the skeleton, each count checked against its tensor, and the result
 * decoded by nnn_model_decode, every usual check applying (diagnostics of
 * that stage have the offsets of the .nnn bytes).
 *
 * Problems (offsets in the safetensors file, paths a tensor's name or
 * "__metadata__.KEY", with ".dtype", ".shape", ".data_offsets"):
 *   NNN_E_TRUNCATED    the file ends inside the header length, the header,
 *                      or before a tensor's end
 *   NNN_E_SAFETENSORS  anything else the format or the metadata breaks
 *   NNN_E_NOMEM, NNN_E_IO, NNN_E_USAGE; the decoder's codes (nnn/model.h)
 */
#ifndef NNN_SAFETENSORS_H
#define NNN_SAFETENSORS_H

#include <nnn/api.h>
#include <nnn/model.h>

/* The format's cap on the header (the reference reader's). */
#define NNN_ST_HEADER_MAX 100000000u
/* The metadata keys nnnkit writes and reads. */
#define NNN_ST_META_FORMAT "format"
#define NNN_ST_META_SKELETON "nnn.skeleton"
#define NNN_ST_META_TENSORS "nnn.tensors"

/* Encodes m into a new buffer: returned in *buf (free it with free()) and
 * *len. `ctx` provides the plugin types the model uses (may be NULL when it
 * uses none): the model is walked through the decoder's field visitor. */
NNN_API NNN_NODISCARD nnn_status_t nnn_safetensors_encode(const nnn_model_t *m, const nnn_ctx_t *ctx,
                                                          unsigned char **buf, size_t *len, nnn_diags_t *diags);

/* The same into `path`, through nnn_write_atomic (file.h: "-" is standard
 * output). */
NNN_API NNN_NODISCARD nnn_status_t nnn_safetensors_write_file(const nnn_model_t *m, const nnn_ctx_t *ctx,
                                                              const char *path, nnn_diags_t *diags);

/* The .nnn bytes a safetensors file nnnkit wrote holds, after every check
 * above but the decode: returned in *out (free it with free()) and *out_len.
 * Nothing is decoded. */
NNN_API NNN_NODISCARD nnn_status_t nnn_safetensors_to_nnn(const void *buf, size_t len, unsigned char **out,
                                                          size_t *out_len, nnn_diags_t *diags);

/* Decodes the `len` bytes at `buf` (opts may be NULL: its ctx provides
 * plugin types, its visitor sees the .nnn fields). *out is a new model that
 * owns its bytes (buf may go away): returned, free it with nnn_model_free.
 * On failure *out is NULL. */
NNN_API NNN_NODISCARD nnn_status_t nnn_safetensors_decode(const void *buf, size_t len, const nnn_decode_opts_t *opts,
                                                          nnn_model_t **out, nnn_diags_t *diags);

/* Reads the file at `path` whole with checked reads (a file cut short
 * meanwhile is NNN_E_IO, never SIGBUS; it must be a regular file) and
 * decodes it as nnn_safetensors_decode does. */
NNN_API NNN_NODISCARD nnn_status_t nnn_safetensors_read_file(const char *path, const nnn_decode_opts_t *opts,
                                                             nnn_model_t **out, nnn_diags_t *diags);

#endif
