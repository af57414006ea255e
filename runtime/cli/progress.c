/* progress.c: a one-line progress bar on stderr for long commands.
 *
 * Drawn with '\r' and no escape sequences, at most every PROGRESS_PERIOD
 * seconds of CLOCK_MONOTONIC so that a fast loop costs a clock read per
 * step, and erased with spaces at the end so that what follows starts on a
 * clean line. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_PERIOD 0.1 /* seconds between redraws: 10 a second at most */
#define BAR_MAX 30

double cli_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int cli_progress_wanted(int flag)
{
	if (flag >= 0)
		return flag;
	const char *env = getenv("NNNKIT_PROGRESS");
	if (env && (!strcmp(env, "0") || !strcmp(env, "1")))
		return env[0] == '1';
	const char *term = getenv("TERM");
	return isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
}

static int columns(void)
{
	struct winsize w;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
		return w.ws_col;
	return 80;
}

/* "42s", "3:07", "1:02:03". */
static void fmt_time(double s, char *buf, size_t size)
{
	long t = s < 0 ? 0 : s > 359999 ? 359999 : (long)(s + 0.5);
	if (t < 60)
		snprintf(buf, size, "%lds", t);
	else if (t < 3600)
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

static void draw(cli_progress_t *p, double t)
{
	char line[512], stats[160], eta[32] = "--", bar[BAR_MAX + 1];
	double elapsed = t - p->start, rate = elapsed > 0 ? (double)p->done / elapsed : 0;
	double pct = p->total ? 100.0 * (double)p->done / (double)p->total : 0;
	if (rate > 0)
		fmt_time((double)(p->done < p->total ? p->total - p->done : 0) / rate, eta, sizeof eta);
	int n = snprintf(stats, sizeof stats, " %llu/%llu %s %3.0f%% %.0f/s ETA %s", (unsigned long long)p->done,
	                 (unsigned long long)p->total, p->unit, pct, rate, eta);
	/* The bar takes what the terminal leaves; the line never wraps. */
	int label = (int)strlen(p->label), room = p->cols - 1 - label - n - 3, w = room < BAR_MAX ? room : BAR_MAX;
	int len;
	if (w >= 5) {
		int full = p->total ? (int)((double)w * (double)p->done / (double)p->total) : 0;
		memset(bar, '#', (size_t)full);
		memset(bar + full, '.', (size_t)(w - full));
		bar[w] = '\0';
		len = snprintf(line, sizeof line, "\r%s [%s]%s", p->label, bar, stats);
	} else {
		len = snprintf(line, sizeof line, "\r%s%s", p->label, stats);
	}
	if (len >= (int)sizeof line)
		len = (int)sizeof line - 1;
	if (len > p->cols) /* a very narrow terminal: cut, rather than wrap */
		len = p->cols;
	/* Spaces over what is left of a longer previous line; one write, as
	 * stderr is unbuffered. */
	int pad = p->width - (len - 1);
	if (pad > 0 && len + pad < (int)sizeof line) {
		memset(line + len, ' ', (size_t)pad);
		len += pad;
	}
	fwrite(line, 1, (size_t)len, stderr);
	p->width = len - 1 > p->width ? len - 1 : p->width;
	p->last = t;
}

void cli_progress_start(cli_progress_t *p, int on, const char *label, const char *unit, uint64_t total)
{
	memset(p, 0, sizeof *p);
	p->on = on;
	p->label = label;
	p->unit = unit;
	p->total = total;
	if (!on)
		return;
	p->cols = columns();
	p->start = cli_seconds();
	/* Drawn at once: the first step may be the longest (plans, page faults). */
	draw(p, p->start);
}

void cli_progress_update(cli_progress_t *p, uint64_t done)
{
	p->done = done;
	if (!p->on)
		return;
	double t = cli_seconds();
	if (t - p->last >= PROGRESS_PERIOD)
		draw(p, t);
}

void cli_progress_end(cli_progress_t *p)
{
	char blank[512 + 2];
	if (!p->on || !p->width)
		return;
	int w = p->width < 512 ? p->width : 512;
	blank[0] = '\r';
	memset(blank + 1, ' ', (size_t)w);
	blank[w + 1] = '\r';
	fwrite(blank, 1, (size_t)w + 2, stderr);
	p->width = 0;
}
