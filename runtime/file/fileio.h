/* fileio.h (internal): the one way libnnn opens a file and reads its bytes
 * (runtime/file/file.c). Opening never blocks and accepts regular files only;
 * every read is a checked pread, so a file that shrinks after it was opened
 * is an NNN_E_IO error where reading a mapping would raise SIGBUS. */
#ifndef NNN_FILEIO_H
#define NNN_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include <nnn/file.h>
#include <nnn/status.h>

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

/* nnn_file_of_copy, nnn_tmp_dir_make and nnn_tmp_dir_remove are public
 * (nnn/file.h): the CLI uses them. */

#endif
