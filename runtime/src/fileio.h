/* fileio.h (internal): the one way libnnn opens a file and reads its bytes
 * (runtime/src/file.c). Opening never blocks and accepts regular files only;
 * every read is a checked pread, so a file that shrinks after it was opened
 * is an NNN_E_IO error where reading a mapping would raise SIGBUS. */
#ifndef NNN_FILEIO_H
#define NNN_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include <nnn/file.h>
#include <nnn/status.h>

/* What a read that came up short says, wherever it happens. */
#define NNN_SHORT_READ                                                                              \
	"the file is shorter than when it was opened, or reading it failed; it changed while it was " \
	"read (open it again once it is written)"

/* Opens `path` read-only with O_NONBLOCK (a FIFO or a device cannot make
 * open wait), checks with fstat that it is a regular file, then clears
 * O_NONBLOCK. *size is its size. On failure *fd is -1 and the problem, which
 * names the kind of file found (directory, FIFO, device, socket), is in
 * diags; `name` (may be NULL) starts the messages, for callers whose
 * messages name the file themselves. */
nnn_status_t nnn_open_regular(const char *path, const char *name, int *fd, size_t *size, nnn_diags_t *diags);

/* Reads up to n bytes at off; the count read (short only at the end of the
 * file, or on an error). */
size_t nnn_pread_all(int fd, void *dst, size_t n, uint64_t off);

/* The first `size` bytes of fd in a new buffer (nnn_mem_big: free it with
 * free()), read with pread; fewer is NNN_E_IO with the offset where they
 * ended. */
nnn_status_t nnn_read_copy(int fd, size_t size, unsigned char **out, nnn_diags_t *diags);

/* A file of bytes in memory (`copy`, from nnn_mem_big or malloc, adopted:
 * freed with the file, or at once on failure), as nnn_file_map gives one;
 * with opts, decoded too, as nnn_file_open with NNN_DECODE_COPY. For a
 * model that was never a file: the CLI's imported .onnx, encoded. */
NNN_NODISCARD nnn_status_t nnn_file_of_copy(unsigned char *copy, size_t len, const nnn_decode_opts_t *opts,
                                            nnn_file_t **out, nnn_diags_t *diags);

/* A new folder TARGET.tmp.XXXXXX beside `target` (mode 0777 less the
 * umask), its name in tmp: what export fills and renames to TARGET. The
 * returned descriptor holds the flock that tells the next writer's sweep
 * (write.c) that the folder is in use: keep it open until the rename, then
 * close it. Stale folders of the same target, left by a writer that was
 * killed, are removed first. -1 with errno on failure. */
int nnn_tmp_dir_make(const char *target, char *tmp, size_t size);

/* Removes the folder nnn_tmp_dir_make made, the plain files in it, and
 * closes fd. */
void nnn_tmp_dir_remove(const char *tmp, int fd);

#endif
