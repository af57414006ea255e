/* st_read.c: a model from safetensors (nnn/safetensors.h).
 *
 * The format's own rules are checked first, all of them, whatever the
 * metadata says: a file is refused as the format's reference reader would
 * refuse it before nnnkit asks for anything of its own. Then the float
 * bytes go back into the skeleton and libnnn's decoder checks the rest.
 * Nothing is allocated before the sizes it depends on are checked against
 * the file: the spliced .nnn bytes are at most the file's float bytes plus
 * the skeleton, which is shorter than its base64.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnn/file.h>
#include <nnn/safetensors.h>

#include <nnn/validate.h>

#include "codec.h"
#include "mem.h"
#include "path.h"
#include "st.h"
#include "try.h"
#include "utf8.h"

typedef struct tens {
	const char *name; /* a key of the parsed header */
	const char *dtype;
	size_t esize;
	nnn_shape_t shape;
	uint64_t begin, end;
	bool used;
} tens_t;

typedef struct rd {
	const unsigned char *b;
	size_t len;
	uint64_t n; /* header bytes */
	json_t *root, *meta;
	tens_t *t;  /* in buffer order once covered */
	size_t nt;
	nnn_diags_t *d;
} rd_t;

static nnn_status_t bad(rd_t *r, nnn_status_t code, uint64_t at, const char *path, const char *fmt, ...)
	NNN_PRINTF(5, 6);

static nnn_status_t bad(rd_t *r, nnn_status_t code, uint64_t at, const char *path, const char *fmt, ...)
{
	char msg[NNN_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return nnn_diags_add(r->d, code, at, path, "%s", msg);
}

/* Where a key stands in the header (its opening quote), for messages: the
 * first `"key"` followed by ':' and not inside a string's escape; the
 * header's start when none is found (a key written with escapes). */
static uint64_t key_at(const rd_t *r, const char *key)
{
	const char *h = (const char *)r->b + 8, *end = h + r->n;
	size_t k = strlen(key);
	for (const char *p = h; p && p + k + 2 <= end; p = memchr(p + 1, '"', (size_t)(end - p - 1))) {
		const char *q = p + 1 + k;
		if (*p != '"' || (p > h && p[-1] == '\\') || memcmp(p + 1, key, k) || *q != '"')
			continue;
		for (q++; q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'); q++)
			;
		if (q < end && *q == ':')
			return 8 + (uint64_t)(p - h);
	}
	return 8;
}

/* ---- the format ---- */

static nnn_status_t header(rd_t *r)
{
	json_error_t err;
	if (r->len < 8)
		return bad(r, NNN_E_TRUNCATED, 0, "header_len",
		           "the file has %zu bytes; a safetensors file starts with an 8-byte header length", r->len);
	for (int i = 0; i < 8; i++)
		r->n |= (uint64_t)r->b[i] << 8 * i;
	if (r->n > NNN_ST_HEADER_MAX)
		return bad(r, NNN_E_SAFETENSORS, 0, "header_len",
		           "found a header of %" PRIu64 " bytes; the format allows at most %u", r->n, NNN_ST_HEADER_MAX);
	if (r->n > r->len - 8)
		return bad(r, NNN_E_TRUNCATED, 8, "header",
		           "the header length says %" PRIu64 " bytes, the file has %zu after it", r->n, r->len - 8);
	if (r->n == 0 || r->b[8] != '{')
		return bad(r, NNN_E_SAFETENSORS, 8, "header", "found %s, expected the '{' that starts the JSON header",
		           r->n ? "another byte" : "an empty header");
	size_t u = nnn_utf8_bad(r->b + 8, (size_t)r->n);
	if (u < r->n)
		return bad(r, NNN_E_SAFETENSORS, 8 + u, "header", "byte 0x%02x: the header is not valid UTF-8",
		           r->b[8 + u]);
	r->root = json_loadb((const char *)r->b + 8, (size_t)r->n, JSON_REJECT_DUPLICATES, &err);
	if (!r->root)
		return bad(r, NNN_E_SAFETENSORS, 8 + (uint64_t)(err.position > 0 ? err.position : 0), "header",
		           "not JSON: %s (line %d, column %d)", err.text, err.line, err.column);
	if (!json_is_object(r->root))
		return bad(r, NNN_E_SAFETENSORS, 8, "header", "found a JSON value other than an object");
	return NNN_OK;
}

/* A non-negative JSON integer. */
static bool count(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static nnn_status_t shape(rd_t *r, const char *key, const json_t *v, tens_t *t, uint64_t *numel)
{
	char p[NNN_PATH_MAX];
	snprintf(p, sizeof p, "%s.shape", key);
	if (!json_is_array(v))
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p, "found %s, expected an array of dimensions",
		           v ? "another value" : "nothing");
	if (json_array_size(v) > NNN_MAX_RANK)
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p, "found %zu dimensions; nnnkit reads at most %d",
		           json_array_size(v), NNN_MAX_RANK);
	*numel = 1;
	t->shape.rank = (int32_t)json_array_size(v);
	for (int32_t i = 0; i < t->shape.rank; i++) {
		uint64_t d;
		if (!count(json_array_get(v, (size_t)i), &d) || d > INT64_MAX)
			return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p,
			           "dimension %d is no non-negative integer; expected one", (int)i);
		t->shape.dims[i] = (int64_t)d;
		*numel = d && *numel > UINT64_MAX / d ? UINT64_MAX : *numel * d;
	}
	return NNN_OK;
}

static nnn_status_t offsets(rd_t *r, const char *key, const json_t *v, tens_t *t, uint64_t numel)
{
	char p[NNN_PATH_MAX];
	snprintf(p, sizeof p, "%s.data_offsets", key);
	if (!json_is_array(v) || json_array_size(v) != 2 || !count(json_array_get(v, 0), &t->begin) ||
	    !count(json_array_get(v, 1), &t->end))
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p,
		           "expected [begin, end]: two non-negative integers, byte offsets in the buffer");
	if (t->end < t->begin)
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p,
		           "found [%" PRIu64 ", %" PRIu64 "]: it ends before it begins", t->begin, t->end);
	if (numel > UINT64_MAX / t->esize || numel * t->esize != t->end - t->begin)
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p,
		           "found %" PRIu64 " bytes; %s x shape makes %s%" PRIu64 " (%zu bytes x %" PRIu64 " elements)",
		           t->end - t->begin, t->dtype, numel > UINT64_MAX / t->esize ? "more than " : "",
		           numel > UINT64_MAX / t->esize ? UINT64_MAX : numel * t->esize, t->esize, numel);
	return NNN_OK;
}

static nnn_status_t entry(rd_t *r, const char *key, const json_t *v, tens_t *t)
{
	char p[NNN_PATH_MAX];
	uint64_t numel = 0;
	t->name = key;
	if (!json_is_object(v))
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), key,
		           "found a JSON value other than an object; expected {\"dtype\", \"shape\", \"data_offsets\"}");
	const json_t *dt = json_object_get(v, "dtype");
	snprintf(p, sizeof p, "%s.dtype", key);
	if (!json_is_string(dt) || !(t->esize = st_dtype_size(json_string_value(dt))))
		return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p, "found %s%s%s, expected a safetensors dtype (F32, F16, "
		           "BF16, F64, I8..I64, U8..U64, BOOL, F8_E4M3, F8_E5M2)", dt ? "" : "nothing",
		           json_is_string(dt) ? json_string_value(dt) : "", dt && !json_is_string(dt) ? "no string" : "");
	t->dtype = json_string_value(dt);
	NNN_TRY(shape(r, key, json_object_get(v, "shape"), t, &numel));
	return offsets(r, key, json_object_get(v, "data_offsets"), t, numel);
}

static nnn_status_t metadata(rd_t *r, const json_t *v)
{
	const char *key;
	json_t *s;
	if (!json_is_object(v))
		return bad(r, NNN_E_SAFETENSORS, key_at(r, "__metadata__"), "__metadata__",
		           "found a JSON value other than an object; expected a map of strings to strings");
	json_object_foreach((json_t *)v, key, s)
		if (!json_is_string(s)) {
			char p[NNN_PATH_MAX];
			snprintf(p, sizeof p, "__metadata__.%s", key);
			return bad(r, NNN_E_SAFETENSORS, key_at(r, key), p, "found a value other than a string; metadata "
			           "values are strings");
		}
	r->meta = (json_t *)v;
	return NNN_OK;
}

static int by_offset(const void *a, const void *b)
{
	const tens_t *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Ordered by offset, the tensors tile the buffer: no overlap, no hole, and
 * nothing past its end. */
static nnn_status_t cover(rd_t *r)
{
	uint64_t pos = 0, size = r->len - 8 - r->n, base = 8 + r->n;
	char p[NNN_PATH_MAX];
	qsort(r->t, r->nt, sizeof *r->t, by_offset);
	for (size_t i = 0; i < r->nt; i++) {
		const tens_t *t = &r->t[i];
		snprintf(p, sizeof p, "%s.data_offsets", t->name);
		if (t->begin < pos)
			return bad(r, NNN_E_SAFETENSORS, key_at(r, t->name), p, "[%" PRIu64 ", %" PRIu64 "] overlaps %s, "
			           "which ends at %" PRIu64 "; tensors may not share bytes", t->begin, t->end,
			           r->t[i - 1].name, pos);
		if (t->begin > pos)
			return bad(r, NNN_E_SAFETENSORS, key_at(r, t->name), p, "[%" PRIu64 ", %" PRIu64 "] leaves a hole of "
			           "%" PRIu64 " bytes after byte %" PRIu64 "; the tensors must cover the buffer exactly",
			           t->begin, t->end, t->begin - pos, pos);
		if (t->end > size)
			return bad(r, NNN_E_TRUNCATED, base + size, p, "[%" PRIu64 ", %" PRIu64 "] ends past the buffer, "
			           "which has %" PRIu64 " bytes", t->begin, t->end, size);
		pos = t->end;
	}
	if (pos != size)
		return bad(r, NNN_E_SAFETENSORS, base + pos, "", "%" PRIu64 " bytes after the last tensor's end; the "
		           "tensors must cover the buffer exactly", size - pos);
	return NNN_OK;
}

static nnn_status_t tensors(rd_t *r)
{
	const char *key;
	json_t *v;
	r->t = calloc(json_object_size(r->root) + 1, sizeof *r->t);
	if (!r->t)
		return bad(r, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for %zu tensors", json_object_size(r->root));
	json_object_foreach(r->root, key, v) {
		if (!strcmp(key, "__metadata__"))
			NNN_TRY(metadata(r, v));
		else
			NNN_TRY(entry(r, key, v, &r->t[r->nt++]));
	}
	return cover(r);
}

/* ---- nnnkit's metadata ---- */

/* A file nnnkit did not write: its first tensors, and where they can go. */
static nnn_status_t foreign(rd_t *r)
{
	char list[256] = "";
	size_t k = 0;
	for (size_t i = 0; i < r->nt && i < 3 && k < sizeof list; i++) {
		char sh[96];
		k += (size_t)snprintf(list + k, sizeof list - k, "%s%s (%s, %s)", i ? ", " : "", r->t[i].name,
		                      r->t[i].dtype, nnn_shape_format(&r->t[i].shape, sh, sizeof sh));
	}
	if (r->nt > 3 && k < sizeof list)
		snprintf(list + k, sizeof list - k, " and %zu more", r->nt - 3);
	return bad(r, NNN_E_SAFETENSORS, 8, "__metadata__",
	           "no nnnkit metadata (\"" NNN_ST_META_FORMAT "\": \"nnn\" and \"" NNN_ST_META_SKELETON "\"): "
	           "a safetensors checkpoint holds tensors without the model around them; its %zu tensors: %s. "
	           "Save each tensor as .npy and name it in a spec for nnnkit build",
	           r->nt, r->nt ? list : "none");
}

static const char *meta_str(const rd_t *r, const char *key)
{
	return r->meta ? json_string_value(json_object_get(r->meta, key)) : NULL;
}

static nnn_status_t ours(rd_t *r)
{
	const char *fmt = meta_str(r, NNN_ST_META_FORMAT);
	if (!fmt || strcmp(fmt, "nnn") || !meta_str(r, NNN_ST_META_SKELETON) || !meta_str(r, NNN_ST_META_TENSORS))
		return foreign(r);
	for (size_t i = 0; i < r->nt; i++) {
		char p[NNN_PATH_MAX];
		snprintf(p, sizeof p, "%s.dtype", r->t[i].name);
		nnn_ekind_t kind;
		st_dtype_kind(r->t[i].dtype, &kind);
		if (kind == NNN_EK_NONE)
			return bad(r, NNN_E_SAFETENSORS, key_at(r, r->t[i].name), p,
			           "tensor %s is %s: .nnn has no such element type; expected a dtype of the schema's "
			           "element types (F32, F16, BF16, I8, U8, ...; cast it and write the file again)",
			           r->t[i].name, r->t[i].dtype);
	}
	return NNN_OK;
}

static nnn_status_t skeleton(rd_t *r, st_buf_t *skel)
{
	const char *s = meta_str(r, NNN_ST_META_SKELETON);
	size_t n = strlen(s), badc;
	skel->b = malloc(n / 4 * 3 + 1);
	if (!skel->b)
		return bad(r, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for a skeleton of %zu bytes", n / 4 * 3);
	skel->n = st_b64_decode(s, n, skel->b, &badc);
	if (skel->n == SIZE_MAX)
		return bad(r, NNN_E_SAFETENSORS, key_at(r, NNN_ST_META_SKELETON), "__metadata__." NNN_ST_META_SKELETON,
		           badc == n ? "found %zu characters, expected base64: a multiple of 4"
		                     : "character %zu of the value is no base64 there; expected base64 text", badc == n ? n : badc);
	return NNN_OK;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(tens_t *const *)a)->name, (*(tens_t *const *)b)->name);
}

/* Where each tensor goes in the skeleton: [["name", at], ...], at
 * non-decreasing, each right after a count that equals the tensor's. */
static nnn_status_t place(rd_t *r, const json_t *e, size_t i, tens_t **idx, const st_buf_t *skel, uint64_t *prev,
                          tens_t **out)
{
	char p[NNN_PATH_MAX];
	uint64_t at;
	tens_t key = { .name = json_string_value(json_array_get(e, 0)) }, *kp = &key, **hit;
	snprintf(p, sizeof p, "__metadata__." NNN_ST_META_TENSORS "[%zu]", i);
	uint64_t where = key_at(r, NNN_ST_META_TENSORS);
	if (!json_is_array(e) || json_array_size(e) != 2 || !key.name || !count(json_array_get(e, 1), &at))
		return bad(r, NNN_E_SAFETENSORS, where, p, "expected [\"tensor name\", offset in the skeleton]");
	if (at < *prev || at < 4 || at > skel->n)
		return bad(r, NNN_E_SAFETENSORS, where, p, "offset %" PRIu64 " is outside [%" PRIu64 ", %zu]: "
		           "the places must follow the skeleton in order", at, *prev > 4 ? *prev : 4, skel->n);
	hit = bsearch(&kp, idx, r->nt, sizeof *idx, by_name);
	if (!hit || (*hit)->used)
		return bad(r, NNN_E_SAFETENSORS, where, p, "tensor %s is %s", key.name,
		           hit ? "placed twice" : "not in the file");
	uint32_t c = nnn_le_u32(skel->b + at - 4);
	uint64_t numel = ((*hit)->end - (*hit)->begin) / (*hit)->esize;
	if ((int32_t)c < 0 || c != numel)
		return bad(r, NNN_E_SAFETENSORS, where, p, "the skeleton's count before offset %" PRIu64 " is %" PRId32
		           ", tensor %s has %" PRIu64 " elements; expected the same", at, (int32_t)c, key.name, numel);
	(*hit)->used = true;
	*prev = at;
	*out = *hit;
	return NNN_OK;
}

typedef struct spot {
	tens_t *t;
	uint64_t at;
} spot_t;

static nnn_status_t places(rd_t *r, const json_t *list, const st_buf_t *skel, spot_t *sp)
{
	tens_t **idx = malloc((r->nt + 1) * sizeof *idx);
	uint64_t prev = 0;
	nnn_status_t st = NNN_OK;
	if (!idx)
		return bad(r, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for %zu tensors", r->nt);
	for (size_t i = 0; i < r->nt; i++)
		idx[i] = &r->t[i];
	qsort(idx, r->nt, sizeof *idx, by_name);
	for (size_t i = 0; st == NNN_OK && i < json_array_size(list); i++) {
		st = place(r, json_array_get(list, i), i, idx, skel, &prev, &sp[i].t);
		sp[i].at = prev;
	}
	free(idx);
	for (size_t i = 0; st == NNN_OK && i < r->nt; i++)
		if (!r->t[i].used)
			st = bad(r, NNN_E_SAFETENSORS, key_at(r, r->t[i].name), r->t[i].name,
			         "tensor %s has no place in " NNN_ST_META_TENSORS "; every tensor must have one",
			         r->t[i].name);
	return st;
}

/* The .nnn bytes: the skeleton with each tensor's bytes at its place. */
static nnn_status_t splice(rd_t *r, const st_buf_t *skel, unsigned char **out, size_t *out_len)
{
	json_error_t err;
	const char *text = meta_str(r, NNN_ST_META_TENSORS);
	json_t *list = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	spot_t *sp = NULL;
	nnn_status_t st = NNN_OK;
	if (!json_is_array(list) || json_array_size(list) != r->nt)
		st = bad(r, NNN_E_SAFETENSORS, key_at(r, NNN_ST_META_TENSORS), "__metadata__." NNN_ST_META_TENSORS,
		         "%s; expected a JSON array of %zu [\"tensor name\", offset] pairs, one per tensor",
		         list ? (json_is_array(list) ? "found another number of entries" : "found no array")
		              : err.text, r->nt);
	else if (!(sp = calloc(r->nt + 1, sizeof *sp)))
		st = bad(r, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for %zu tensors", r->nt);
	else
		st = places(r, list, skel, sp);
	json_decref(list);
	/* The file holds every byte counted here: no overflow, no big lie. */
	size_t total = skel->n + (size_t)(r->len - 8 - r->n), k = 0, from = 0;
	if (st == NNN_OK && !(*out = nnn_mem_big(total ? total : 1)))
		st = bad(r, NNN_E_NOMEM, NNN_NO_OFFSET, "", "no memory for %zu bytes of .nnn", total);
	for (size_t i = 0; st == NNN_OK && i < r->nt; i++) {
		memcpy(*out + k, skel->b + from, (size_t)sp[i].at - from);
		k += (size_t)sp[i].at - from;
		from = (size_t)sp[i].at;
		memcpy(*out + k, r->b + 8 + r->n + sp[i].t->begin, (size_t)(sp[i].t->end - sp[i].t->begin));
		k += (size_t)(sp[i].t->end - sp[i].t->begin);
	}
	if (st == NNN_OK) {
		memcpy(*out + k, skel->b + from, skel->n - from);
		*out_len = k + skel->n - from;
	}
	free(sp);
	return st;
}

nnn_status_t nnn_safetensors_to_nnn(const void *buf, size_t len, unsigned char **out, size_t *out_len,
                                    nnn_diags_t *diags)
{
	rd_t r = { .b = buf, .len = len, .d = diags };
	st_buf_t skel = { 0 };
	if (!out || !out_len || (!buf && len))
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_safetensors_to_nnn: a NULL argument");
	*out = NULL;
	*out_len = 0;
	nnn_status_t st = header(&r);
	if (st == NNN_OK)
		st = tensors(&r);
	if (st == NNN_OK)
		st = ours(&r);
	if (st == NNN_OK)
		st = skeleton(&r, &skel);
	if (st == NNN_OK)
		st = splice(&r, &skel, out, out_len);
	if (st != NNN_OK) {
		free(*out);
		*out = NULL;
	}
	free(skel.b);
	free(r.t);
	json_decref(r.root);
	return st;
}

nnn_status_t nnn_safetensors_decode(const void *buf, size_t len, const nnn_decode_opts_t *opts, nnn_model_t **out,
                                    nnn_diags_t *diags)
{
	unsigned char *b;
	size_t n;
	if (!out)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_safetensors_decode: a NULL argument");
	*out = NULL;
	NNN_TRY(nnn_safetensors_to_nnn(buf, len, &b, &n, diags));
	return nnn_model_adopt(b, n, opts, out, diags); /* the model owns b, or it is freed */
}

nnn_status_t nnn_safetensors_read_file(const char *path, const nnn_decode_opts_t *opts, nnn_model_t **out,
                                       nnn_diags_t *diags)
{
	nnn_file_t *f;
	size_t size;
	unsigned char *b;
	if (!out || !path)
		return nnn_diags_add(diags, NNN_E_USAGE, NNN_NO_OFFSET, "", "nnn_safetensors_read_file: a NULL argument");
	*out = NULL;
	NNN_TRY(nnn_file_map(path, &f, diags));
	nnn_file_bytes(f, &size);
	/* Read with checked reads, not from the mapping: a file cut short
	 * meanwhile is an error, not SIGBUS. */
	nnn_status_t st = (b = malloc(size ? size : 1)) ? nnn_file_read(f, 0, b, size, diags)
	                                                : nnn_diags_add(diags, NNN_E_NOMEM, NNN_NO_OFFSET, "",
	                                                                "no memory for %zu bytes", size);
	nnn_file_close(f);
	if (st == NNN_OK)
		st = nnn_safetensors_decode(b, size, opts, out, diags);
	free(b);
	return st;
}
