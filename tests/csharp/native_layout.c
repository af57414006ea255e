/* native_layout.c: the size and member offsets of every libnnn struct that
 * csharp/Runtime/Native.cs mirrors, one "struct member offset" line each and
 * one "struct sizeof N" line, for NativeTests to compare with the C# mirrors'
 * Marshal.SizeOf and Marshal.OffsetOf. */
#include <stddef.h>
#include <stdio.h>

#include <nnn/context.h>
#include <nnn/model.h>
#include <nnn/run.h>
#include <nnn/status.h>

#define SIZE(t) printf(#t " sizeof %zu\n", sizeof(t))
#define AT(t, m) printf(#t " " #m " %zu\n", offsetof(t, m))

int main(void)
{
	SIZE(nnn_diag_t);
	AT(nnn_diag_t, code);
	AT(nnn_diag_t, offset);
	AT(nnn_diag_t, path);
	AT(nnn_diag_t, msg);
	AT(nnn_diag_t, line);
	AT(nnn_diag_t, column);
	SIZE(nnn_diags_t);
	AT(nnn_diags_t, v);
	AT(nnn_diags_t, n);
	AT(nnn_diags_t, cap);
	AT(nnn_diags_t, limit);
	AT(nnn_diags_t, dropped);
	SIZE(nnn_shape_t);
	AT(nnn_shape_t, rank);
	AT(nnn_shape_t, dims);
	SIZE(nnn_run_opts_t);
	AT(nnn_run_opts_t, size);
	AT(nnn_run_opts_t, threads);
	AT(nnn_run_opts_t, max_tensor_bytes);
	AT(nnn_run_opts_t, compat);
	SIZE(nnn_decode_opts_t);
	AT(nnn_decode_opts_t, flags);
	AT(nnn_decode_opts_t, visit);
	AT(nnn_decode_opts_t, ctx);
	SIZE(nnn_discover_opts_t);
	AT(nnn_discover_opts_t, size);
	AT(nnn_discover_opts_t, files);
	AT(nnn_discover_opts_t, nfiles);
	AT(nnn_discover_opts_t, search);
	AT(nnn_discover_opts_t, installed_dir);
	AT(nnn_discover_opts_t, scanner);
	AT(nnn_discover_opts_t, timeout_ms);
	AT(nnn_discover_opts_t, cache);
	/* The constants the mirrors are sized by, and the flags Native.cs passes. */
	printf("const NNN_PATH_MAX %d\n", NNN_PATH_MAX);
	printf("const NNN_MSG_MAX %d\n", NNN_MSG_MAX);
	printf("const NNN_MAX_RANK %d\n", NNN_MAX_RANK);
	printf("const NNN_DECODE_COPY %u\n", (unsigned)NNN_DECODE_COPY);
	printf("const NNN_COMPAT_CONV_ORIGINAL %u\n", (unsigned)NNN_COMPAT_CONV_ORIGINAL);
	printf("const NNN_RUN_BATCH %d\n", NNN_RUN_BATCH);
	return 0;
}
