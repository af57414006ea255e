/* nnn/file.h: open a .nnn file by mapping it read-only (zero-copy).
 *
 * Opening costs time proportional to the number of layers, not to the
 * tensor bytes: tensor data stays in the mapping and is read through the
 * views of nnn/types.h. The decoder reads the rest (headers, dims, strings)
 * with pread, so no page of the mapping is touched, and none faulted in,
 * until a caller reads tensor data.
 */
#ifndef NNN_FILE_H
#define NNN_FILE_H

#include <nnn/model.h>

typedef struct nnn_file nnn_file_t;

/* Maps `path` and decodes it (opts may be NULL). With NNN_DECODE_COPY the
 * file is not mapped but read whole into memory the model owns, so the
 * model does not depend on the file. Owned: close with nnn_file_close.
 * Problems are appended to `diags`; a file that shrinks while it is read is
 * NNN_E_IO. */
NNN_NODISCARD nnn_status_t nnn_file_open(const char *path, const nnn_decode_opts_t *opts, nnn_file_t **out,
                                         nnn_diags_t *diags);

/* The decoded model. Borrowed: valid until nnn_file_close. */
const nnn_model_t *nnn_file_model(const nnn_file_t *f);

/* The file's bytes and size: the mapping, or with NNN_DECODE_COPY the
 * model's copy. Borrowed: valid until nnn_file_close. */
const unsigned char *nnn_file_bytes(const nnn_file_t *f, size_t *size);

/* Unmaps and frees; NULL is harmless. */
void nnn_file_close(nnn_file_t *f);

/* Maps a whole file read-only without decoding it (for validate and dump).
 * Owned: release with nnn_unmap. An empty file gives *data == NULL, *size 0. */
NNN_NODISCARD nnn_status_t nnn_map(const char *path, const unsigned char **data, size_t *size,
                                   nnn_diags_t *diags);
void nnn_unmap(const unsigned char *data, size_t size);

/* Writes to `path` atomically what fill writes to its descriptor
 * (temporary file PATH.tmp.XXXXXX in the same folder, fsync, rename, fsync
 * of the folder). The single write path of libnnn: every writer goes
 * through it. Every failure removes the temporary; SIGXFSZ is blocked in
 * the calling thread meanwhile (a file size limit is an NNN_E_IO naming
 * it); temporaries of the same target left by killed writers are removed
 * first. A new file gets 0666 less the umask, a replaced one keeps its
 * mode. A symbolic link is written through (its file replaced, the link
 * kept; a dangling link is NNN_E_IO); a hard link's other names keep the
 * old contents. docs/security.md says why. */
NNN_NODISCARD nnn_status_t nnn_write_atomic(const char *path,
                                            nnn_status_t (*fill)(void *ctx, int fd, nnn_diags_t *diags),
                                            void *ctx, nnn_diags_t *diags);

/* nnn_write_atomic of the n bytes at buf. */
NNN_NODISCARD nnn_status_t nnn_write_atomic_bytes(const char *path, const void *buf, size_t n, nnn_diags_t *diags);

/* Writes all n bytes to fd, retrying short writes and EINTR; for fill
 * callbacks of nnn_write_atomic. */
NNN_NODISCARD nnn_status_t nnn_write_all(int fd, const void *buf, size_t n, nnn_diags_t *diags);

#endif
