/* nnn/file.h: open a .nnn file by mapping it read-only (zero-copy).
 *
 * Opening costs time proportional to the number of layers, not to the
 * tensor bytes: tensor data stays in the mapping and is read through the
 * views of nnn/types.h. The decoder reads the rest (headers, dims, strings)
 * with pread, so no page of the mapping is touched, and none faulted in,
 * until a caller reads tensor data.
 *
 * Opening never blocks: the file is opened with O_NONBLOCK and anything
 * but a regular file (a directory, a FIFO, a device, a socket) is refused
 * with NNN_E_IO before a byte is read. A file that shrinks after it was
 * opened is NNN_E_IO wherever the library reads it (decoding, validating,
 * nnn_file_read, the copy of NNN_DECODE_COPY), with the offset where the
 * bytes ended, never SIGBUS. What remains: tensor data are views into the
 * mapping, and reading them after another program truncated the file raises
 * SIGBUS, as with any mapped file; decode with NNN_DECODE_COPY to not depend
 * on the file at all.
 */
#ifndef NNN_FILE_H
#define NNN_FILE_H

#include <nnn/api.h>
#include <nnn/model.h>

typedef struct nnn_file nnn_file_t;

/* Maps `path` and decodes it (opts may be NULL). With NNN_DECODE_COPY the
 * file is not mapped but read whole into memory the model owns, so the
 * model does not depend on the file. Owned: close with nnn_file_close.
 * Problems are appended to `diags`; a file that shrinks while it is read is
 * NNN_E_IO. */
NNN_API NNN_NODISCARD nnn_status_t nnn_file_open(const char *path, const nnn_decode_opts_t *opts, nnn_file_t **out,
                                                 nnn_diags_t *diags);

/* The decoded model. Borrowed: valid until nnn_file_close. */
NNN_API const nnn_model_t *nnn_file_model(const nnn_file_t *f);

/* The file's bytes and size: the mapping, or with NNN_DECODE_COPY the
 * model's copy. Borrowed: valid until nnn_file_close. */
NNN_API const unsigned char *nnn_file_bytes(const nnn_file_t *f, size_t *size);

/* Unmaps and frees; NULL is harmless. */
NNN_API void nnn_file_close(nnn_file_t *f);

/* Opens and maps `path` without decoding it, for nnn_file_decode,
 * nnn_file_validate and nnn_file_read. Owned: close with nnn_file_close
 * (nnn_file_model gives NULL for it). */
NNN_API NNN_NODISCARD nnn_status_t nnn_file_map(const char *path, nnn_file_t **out, nnn_diags_t *diags);

/* Decodes the file as nnn_model_decode decodes bytes (every flag, the
 * visitor and NNN_DECODE_KEEP_GOING included), but reading the structure
 * with pread: a file cut short is NNN_E_IO. A visitor gets the values of a
 * float array read with pread too (valid during its call), so decoding with
 * a visitor reads every tensor byte. Without NNN_DECODE_COPY the model
 * borrows `f` (tensor data are views into its mapping): free it before
 * closing f. With it, the file is read whole with pread into memory the
 * model owns. Returned: free with nnn_model_free. */
NNN_API NNN_NODISCARD nnn_status_t nnn_file_decode(const nnn_file_t *f, const nnn_decode_opts_t *opts,
                                                   nnn_model_t **out, nnn_diags_t *diags);

/* Reads n bytes at `off` into dst with pread: NNN_E_TRUNCATED past the size
 * the file had when it was opened, NNN_E_IO (with the offset where the
 * bytes ended) when it has shrunk since. */
NNN_API NNN_NODISCARD nnn_status_t nnn_file_read(const nnn_file_t *f, uint64_t off, void *dst, size_t n,
                                                 nnn_diags_t *diags);

/* The n bytes of `copy` as a file, for a model that never was one (an
 * imported model, encoded): nnn_file_bytes, nnn_file_read, nnn_file_decode
 * and nnn_file_validate read them as they would a file's. With opts the
 * bytes are decoded too, as nnn_file_open does with NNN_DECODE_COPY (always
 * set; NNN_DECODE_KEEP_GOING is cleared), and nnn_file_model gives the
 * model; without, nnn_file_model gives NULL. `copy` comes from malloc (or
 * nnn_model_encode) and is adopted in every case: freed with the file, or
 * at once on failure. Owned: close with nnn_file_close. Errors: NNN_E_NOMEM,
 * or the decoder's code with its problems in diags. */
NNN_API NNN_NODISCARD nnn_status_t nnn_file_of_copy(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts,
                                                    nnn_file_t **out, nnn_diags_t *diags);

/* Maps a whole file read-only without decoding it. Owned: release with
 * nnn_unmap. An empty file gives *data == NULL, *size 0. Reading the mapping
 * after another program truncated the file raises SIGBUS: to decode or
 * validate a file, use nnn_file_map with nnn_file_decode or
 * nnn_file_validate, which read with pread. */
NNN_API NNN_NODISCARD nnn_status_t nnn_map(const char *path, const unsigned char **data, size_t *size,
                                           nnn_diags_t *diags);
NNN_API void nnn_unmap(const unsigned char *data, size_t size);

/* Writes to `path` what fill writes to its descriptor. The single write
 * path of libnnn: every writer goes through it. A regular file or a new
 * name is replaced atomically (temporary file PATH.tmp.XXXXXX in the same
 * folder, fsync, rename, fsync of the folder); every failure removes the
 * temporary; temporaries of the same target left by killed writers are
 * removed first. A new file gets 0666 less the umask; a replaced one keeps
 * its permission bits, never set-uid, set-gid or sticky; a file the caller
 * may not write is refused, not replaced. "-" is standard output, and a
 * FIFO or a character device (/dev/null) is written in place as a stream
 * (a FIFO nobody reads within 2 seconds is refused); a folder, a socket or
 * a block device is refused: such a file is never replaced. A symbolic
 * link is written through (its file replaced, the link kept); a dangling
 * link, and a link in a sticky world-writable folder that belongs to
 * neither the caller nor the folder's owner, are refused (NNN_E_IO). A
 * hard link's other names keep the old contents. SIGXFSZ is blocked in the
 * calling thread meanwhile (a file size limit is an NNN_E_IO naming it).
 * docs/security.md says why. */
NNN_API NNN_NODISCARD nnn_status_t nnn_write_atomic(const char *path,
                                                    nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags),
                                                    void *ctx, nnn_diags_t *diags);

/* nnn_write_atomic of the n bytes at buf. */
NNN_API NNN_NODISCARD nnn_status_t nnn_write_atomic_bytes(const char *path, const void *buf, size_t n,
                                                          nnn_diags_t *diags);

/* Writes all n bytes to fd, retrying short writes and EINTR; for fill
 * callbacks of nnn_write_atomic. */
NNN_API NNN_NODISCARD nnn_status_t nnn_write_all(int fd, const void *buf, size_t n, nnn_diags_t *diags);

/* A new folder TARGET.tmp.XXXXXX beside `target` (mode 0777 less the
 * umask), its name written to tmp (size bytes): a folder to fill and then
 * rename to TARGET, all or nothing. The returned descriptor holds the flock
 * that tells the next writer's sweep that the folder is in use: keep it
 * open until the rename, then close it. Stale folders of the same target,
 * left by a writer that was killed, are removed first. -1 with errno on
 * failure (ENAMETOOLONG when tmp or the name would not fit). */
NNN_API int nnn_tmp_dir_make(const char *target, char *tmp, size_t size);

/* Removes the folder nnn_tmp_dir_make made and the plain files in it, and
 * closes fd (its descriptor): the way out when filling it failed. */
NNN_API void nnn_tmp_dir_remove(const char *tmp, int fd);

#endif
