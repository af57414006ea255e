/* status.c: status names and the diagnostics list. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <nnn/status.h>

const char *nnn_status_str(nnn_status_t s)
{
	switch (s) {
#define NNN_STATUS_STR_(name, num, desc, fix) \
	case NNN_##name:                      \
		return desc;
		NNN_STATUS_LIST(NNN_STATUS_STR_)
#undef NNN_STATUS_STR_
	}
	return "unknown status";
}

const char *nnn_status_name(nnn_status_t s)
{
	switch (s) {
#define NNN_STATUS_NAME_(name, num, desc, fix) \
	case NNN_##name:                       \
		return #name;
		NNN_STATUS_LIST(NNN_STATUS_NAME_)
#undef NNN_STATUS_NAME_
	}
	return "UNKNOWN";
}

const char *nnn_status_remedy(nnn_status_t s)
{
	switch (s) {
#define NNN_STATUS_FIX_(name, num, desc, fix) \
	case NNN_##name:                      \
		return fix;
		NNN_STATUS_LIST(NNN_STATUS_FIX_)
#undef NNN_STATUS_FIX_
	}
	return "";
}

void nnn_diags_init(nnn_diags_t *d)
{
	d->v = NULL;
	d->n = d->cap = d->limit = d->dropped = 0;
}

void nnn_diags_free(nnn_diags_t *d)
{
	if (!d)
		return;
	free(d->v);
	nnn_diags_init(d);
}

void nnn_diags_clear(nnn_diags_t *d)
{
	d->n = d->dropped = 0;
}

nnn_status_t nnn_diags_add(nnn_diags_t *d, nnn_status_t code, uint64_t offset, const char *path,
                           const char *fmt, ...)
{
	size_t limit;
	nnn_diag_t *e;
	va_list ap;

	if (!d)
		return code;
	limit = d->limit ? d->limit : NNN_DIAGS_DEFAULT_LIMIT;
	if (d->n == limit) {
		d->dropped++;
		return code;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 8;
		nnn_diag_t *v = realloc(d->v, cap * sizeof *v);
		if (!v) {
			/* Losing a message is better than losing the code. */
			d->dropped++;
			return code;
		}
		d->v = v;
		d->cap = cap;
	}
	e = &d->v[d->n++];
	e->code = code;
	e->offset = offset;
	e->line = e->column = 0;
	snprintf(e->path, sizeof e->path, "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return code;
}

char *nnn_diag_format(const nnn_diag_t *d, char *buf, size_t size)
{
	char where[NNN_PATH_MAX + 32] = "";
	const char *fix = nnn_status_remedy(d->code);

	if (d->line && d->path[0])
		snprintf(where, sizeof where, "%" PRIu32 ":%" PRIu32 ": %s: ", d->line, d->column, d->path);
	else if (d->line)
		snprintf(where, sizeof where, "%" PRIu32 ":%" PRIu32 ": ", d->line, d->column);
	else if (d->path[0] && d->offset != NNN_NO_OFFSET)
		snprintf(where, sizeof where, "%s @0x%" PRIx64 ": ", d->path, d->offset);
	else if (d->path[0])
		snprintf(where, sizeof where, "%s: ", d->path);
	else if (d->offset != NNN_NO_OFFSET)
		snprintf(where, sizeof where, "@0x%" PRIx64 ": ", d->offset);
	snprintf(buf, size, "%s%s%s%s%s%s%s", where, nnn_status_str(d->code), d->msg[0] ? ": " : "", d->msg,
	         fix[0] ? " (" : "", fix, fix[0] ? ")" : "");
	return buf;
}
