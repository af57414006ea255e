/* scan_pipe.c: what the plugin scanner says on its pipe, and the scan
 * cache keeps: a host line, "at STAGE" lines as the load goes, then one
 * record ("KEY VALUE" lines, strings as LEN:BYTES, ending with "end"),
 * written only after the entry point returned (scan_pipe.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_pipe.h"

#ifndef NNN_VERSION
#define NNN_VERSION "unknown"
#endif

void nnn_buf_put(buf_t *b, const void *s, size_t n)
{
	if (b->failed)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void nnn_buf_putf(buf_t *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		nnn_buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void nnn_buf_put_str(buf_t *b, const char *key, const char *s)
{
	if (!s)
		return;
	nnn_buf_putf(b, "%s %zu:", key, strlen(s));
	nnn_buf_put(b, s, strlen(s));
	nnn_buf_put(b, "\n", 1);
}

void nnn_verdict_free(verdict_t *v)
{
	free((char *)v->r.path);
	free((char *)v->r.name);
	free((char *)v->r.version);
	free((char *)v->r.message);
	free(v->stage);
	memset(v, 0, sizeof *v);
}

void nnn_verdict_put(buf_t *b, const nnn_plugin_report_t *r)
{
	nnn_buf_put_str(b, "stage", r->stage);
	nnn_buf_putf(b, "status %d\n", (int)r->status);
	nnn_buf_put_str(b, "name", r->name);
	nnn_buf_put_str(b, "version", r->version);
	nnn_buf_put_str(b, "message", r->message ? r->message : "");
	nnn_buf_put(b, "layers", 6);
	for (int i = 0; i < r->nlayers; i++)
		nnn_buf_putf(b, " %d", r->layer_ids[i]);
	nnn_buf_put(b, "\nactivations", 12);
	for (int i = 0; i < r->nactivations; i++)
		nnn_buf_putf(b, " %d", r->activation_ids[i]);
	nnn_buf_put(b, "\nend\n", 5);
}

bool nnn_rd_field(rd_t *r, char *key, size_t ksize, const char **val, size_t *len)
{
	size_t k = 0;
	while (r->p < r->e && *r->p != ' ' && *r->p != '\n' && k + 1 < ksize)
		key[k++] = *r->p++;
	key[k] = '\0';
	if (r->p >= r->e || k == 0)
		return false;
	if (*r->p == '\n') {
		r->p++;
		*val = r->p - 1;
		*len = 0;
		return true;
	}
	r->p++;
	const char *q = r->p;
	size_t n = 0;
	while (q < r->e && *q >= '0' && *q <= '9' && n < REPLY_MAX)
		n = n * 10 + (size_t)(*q++ - '0');
	if (q > r->p && q < r->e && *q == ':') {
		q++;
		if ((size_t)(r->e - q) < n + 1 || q[n] != '\n')
			return false;
		*val = q;
		*len = n;
		r->p = q + n + 1;
		return true;
	}
	const char *nl = memchr(r->p, '\n', (size_t)(r->e - r->p));
	if (!nl)
		return false;
	*val = r->p;
	*len = (size_t)(nl - r->p);
	r->p = nl + 1;
	return true;
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int read_ids(const char *s, size_t n, uint8_t *ids)
{
	char tmp[2048];
	int k = 0;
	if (n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	for (char *p = tmp, *end; *p && k < 256; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v < 0 || v > 255)
			return -1;
		ids[k++] = (uint8_t)v;
	}
	return k;
}

bool nnn_verdict_read(rd_t *r, verdict_t *v)
{
	char key[32];
	const char *val;
	size_t len;
	int n;
	while (nnn_rd_field(r, key, sizeof key, &val, &len)) {
		if (!strcmp(key, "end"))
			return v->stage != NULL && v->r.message != NULL;
		if (!strcmp(key, "stage") && !v->stage)
			v->r.stage = v->stage = dupn(val, len);
		else if (!strcmp(key, "status"))
			v->r.status = (nnn_status_t)strtol(val, NULL, 10);
		else if (!strcmp(key, "name") && !v->r.name)
			v->r.name = dupn(val, len);
		else if (!strcmp(key, "version") && !v->r.version)
			v->r.version = dupn(val, len);
		else if (!strcmp(key, "message") && !v->r.message)
			v->r.message = dupn(val, len);
		else if (!strcmp(key, "layers") && (n = read_ids(val, len, v->r.layer_ids)) >= 0)
			v->r.nlayers = n;
		else if (!strcmp(key, "activations") && (n = read_ids(val, len, v->r.activation_ids)) >= 0)
			v->r.nactivations = n;
	}
	return false;
}

void nnn_scan_host_line(buf_t *b)
{
	nnn_buf_putf(b, "host %s %d.%d %08x\n", NNN_VERSION, NNN_ABI_MAJOR, NNN_ABI_MINOR, (unsigned)NNN_SCHEMA_LAYOUT);
}
