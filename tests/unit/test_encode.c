/* test_encode.c: decode -> encode is byte for byte, whatever the bits; files
 * are written atomically. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nnn/file.h>

#include "builder.h"
#include "schemaq.h"

static void roundtrip(const bb_t *b)
{
	nnn_model_t *m;
	unsigned char *out;
	size_t len;
	nnn_diags_t d;
	nnn_diags_init(&d);
	cr_assert_eq(nnn_model_decode(b->b, b->n, NULL, &m, &d), NNN_OK, "%s", d.n ? d.v[0].msg : "");
	cr_assert_eq(nnn_model_encoded_size(m), b->n);
	cr_assert_eq(nnn_model_encode(m, &out, &len, NULL), NNN_OK);
	cr_assert_eq(len, b->n);
	cr_assert_eq(memcmp(out, b->b, len), 0);
	free(out);
	nnn_model_free(m);
	nnn_diags_free(&d);
}

Test(encode, tiny_roundtrip)
{
	bb_t b = { 0 };
	bb_tiny(&b);
	roundtrip(&b);
	bb_free(&b);
}

/* Every odd bit pattern in every float position: scalars (tau, dropout)
 * and tensor data; NUL and multi-byte UTF-8 in the description; both
 * requires-grad values. The decoder accepts these structurally. */
Test(encode, every_bit_pattern_survives)
{
	static const uint32_t odd[] = {
		0x7fa00001u, /* signalling NaN with payload */
		0xffc12345u, /* negative quiet NaN with payload */
		0x80000000u, /* -0.0 */
		0x00000001u, /* smallest subnormal */
		0x807fffffu, /* largest negative subnormal */
		0x7f800000u, /* +inf */
		0xff800000u, /* -inf */
	};
	static const char desc[] = "n\0ul \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		int32_t bias[1] = { 2 }, w[2] = { 1, 2 };
		bb_t b = { 0 };
		bb_i32(&b, 776883790);
		bb_str(&b, desc, (int32_t)sizeof desc - 1);
		bb_u64(&b, 4);
		bb_i32(&b, 1);
		bb_u8(&b, 0);
		bb_u8(&b, 4);
		bb_f32_bits(&b, odd[i]);                          /* tau */
		bb_f32_bits(&b, odd[(i + 1) % 7]);                /* dropout */
		bb_i32s(&b, 1, bias);
		bb_u8(&b, (uint8_t)(i & 1));                      /* requires_grad */
		bb_i32(&b, 2);
		bb_f32_bits(&b, odd[(i + 2) % 7]);
		bb_f32_bits(&b, odd[(i + 3) % 7]);
		bb_i32(&b, 2);
		bb_i32s(&b, 2, w);
		bb_u8(&b, 0);
		bb_i32(&b, 2);
		bb_f32_bits(&b, odd[(i + 4) % 7]);
		bb_f32_bits(&b, odd[(i + 5) % 7]);
		bb_u8(&b, 1);
		roundtrip(&b);
		bb_free(&b);
	}
}

Test(encode, empty_model_and_long_description)
{
	bb_t b = { 0 };
	char *desc = malloc(70000);
	memset(desc, 'x', 70000);
	bb_i32(&b, 776883790);
	bb_str(&b, desc, 70000);
	bb_u64(&b, 0);
	bb_i32(&b, 0);
	roundtrip(&b);
	free(desc);
	bb_free(&b);
}

Test(encode, refuses_unknown_ids_and_negative_counts)
{
	bb_t b = { 0 };
	nnn_model_t *m;
	unsigned char *out = (unsigned char *)1;
	size_t len;
	nnn_diags_t d;
	bb_tiny(&b);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	nnn_diags_init(&d);
	int64_t undef = t_undefined(nnn_layer_id_name, 0);
	char want[32];
	m->layers[1].id = (uint8_t)undef;
	cr_assert_eq(nnn_model_encode(m, &out, &len, &d), NNN_E_UNKNOWN_ID);
	cr_assert_null(out);
	snprintf(want, sizeof want, "layer ID %d", (int)undef);
	cr_assert(strstr(d.v[0].msg, want), "%s", d.v[0].msg);
	m->layers[1].id = 0;
	m->layers[0].bias.dims.n = -1;
	cr_assert_eq(nnn_model_encode(m, &out, &len, &d), NNN_E_COUNT_NEGATIVE);
	nnn_model_free(m);
	nnn_diags_free(&d);
	bb_free(&b);
}

static int count_entries(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void read_file(const char *path, unsigned char *buf, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	*n = fread(buf, 1, 4096, f);
	fclose(f);
}

Test(encode, atomic_write_replaces_or_keeps)
{
	char dir[] = "/tmp/nnnenc.XXXXXX", path[256];
	unsigned char got[4096];
	size_t n;
	bb_t b = { 0 };
	nnn_model_t *m;
	nnn_diags_t d;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/model.nnn", dir);
	bb_tiny(&b);
	cr_assert_eq(nnn_model_decode(b.b, b.n, NULL, &m, NULL), NNN_OK);
	nnn_diags_init(&d);

	/* New file: complete, mode 0644, nothing else left in the folder. */
	cr_assert_eq(nnn_model_write_file(m, path, &d), NNN_OK);
	read_file(path, got, &n);
	cr_assert_eq(n, b.n);
	cr_assert_eq(memcmp(got, b.b, n), 0);
	cr_assert_eq(count_entries(dir), 1);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);

	/* A failed write leaves the old file as it was and no temporary. */
	cr_assert_eq(chmod(path, 0600), 0);
	m->layers[1].id = 77;
	cr_assert_eq(nnn_model_write_file(m, path, &d), NNN_E_UNKNOWN_ID);
	read_file(path, got, &n);
	cr_assert_eq(n, b.n);
	cr_assert_eq(memcmp(got, b.b, n), 0);
	cr_assert_eq(count_entries(dir), 1);

	/* Replacing keeps the old mode. */
	m->layers[1].id = 0;
	m->description.len = 2;
	cr_assert_eq(nnn_model_write_file(m, path, &d), NNN_OK);
	read_file(path, got, &n);
	cr_assert_eq(n, b.n - 2);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(count_entries(dir), 1);

	/* A folder that does not exist: an I/O error naming the problem. */
	nnn_diags_clear(&d);
	cr_assert_eq(nnn_model_write_file(m, "/nonexistent/dir/x.nnn", &d), NNN_E_IO);
	cr_assert(strstr(d.v[0].msg, "cannot open the folder /nonexistent/dir to write /nonexistent/dir/x.nnn: "), "%s",
	          d.v[0].msg);

	unlink(path);
	rmdir(dir);
	nnn_model_free(m);
	nnn_diags_free(&d);
	bb_free(&b);
}
