/* roundtrip.c: see roundtrip.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roundtrip.h"

static bool problem(char *why, size_t size, const char *stage, const nnn_diags_t *d)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	snprintf(why, size, "%s: %s", stage, d->n ? nnn_diag_format(&d->v[0], buf, sizeof buf) : "no message");
	return false;
}

bool json_roundtrip(const void *buf, size_t len, const nnn_ctx_t *ctx, const char *dir, int64_t min, char **json,
                    char *why, size_t size)
{
	nnn_decode_opts_t dopts = { .ctx = ctx };
	nnn_model_t *m = NULL, *back = NULL;
	nnn_diags_t d;
	char *text = NULL, jpath[512];
	unsigned char *enc = NULL;
	size_t tlen = 0, elen = 0;
	bool ok = false;

	/* The JSON "is" in dir's parent, so references read dir/NAME.npy. */
	snprintf(jpath, sizeof jpath, "%s/../model.json", dir ? dir : ".");
	nnn_json_write_opts_t wo = { .tensors_dir = dir, .tensors_min = min, .json_path = jpath };
	char base[512];
	snprintf(base, sizeof base, "%s/..", dir ? dir : ".");
	nnn_json_read_opts_t ro = { .ctx = ctx, .base_dir = base };
	nnn_diags_init(&d);
	if (nnn_model_decode(buf, len, &dopts, &m, &d) != NNN_OK)
		problem(why, size, "decode", &d);
	else if (nnn_json_encode(m, &wo, &text, &tlen, &d) != NNN_OK)
		problem(why, size, "to JSON", &d);
	else if (strlen(text) != tlen)
		snprintf(why, size, "the JSON text has a NUL byte");
	else if (nnn_json_decode(text, tlen, &ro, &back, &d) != NNN_OK)
		problem(why, size, "from JSON", &d);
	else if (nnn_model_encode(back, &enc, &elen, &d) != NNN_OK)
		problem(why, size, "encode", &d);
	else if (elen != len || memcmp(enc, buf, len) != 0)
		snprintf(why, size, "JSON gave back %zu bytes that differ from the %zu read", elen, len);
	else
		ok = true;
	if (json && ok)
		*json = text;
	else
		free(text);
	free(enc);
	nnn_model_free(m);
	nnn_model_free(back);
	nnn_diags_free(&d);
	return ok;
}
