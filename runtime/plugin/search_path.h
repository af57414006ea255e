/* search_path.h (internal): the plugin candidates of one discovery, in
 * precedence order (search_path.c), with what discover.c learns of each. */
#ifndef NNN_SEARCH_PATH_H
#define NNN_SEARCH_PATH_H

#include <stdbool.h>
#include <sys/stat.h>

#include <nnn/context.h>

#include "scan_run.h"

typedef struct cand {
	char *path;       /* canonical, or as given when the precheck failed */
	int rank;         /* 0: the files named; then each search folder; then the installed folder */
	char *source;     /* "--plugin files", "NNN_PLUGIN_PATH folder X", "the installed folder X" */
	struct stat st;
	bool statted;     /* st is valid: the precheck passed */
	int first;        /* index of the same file seen earlier, or -1 */
	bool pass;        /* its scan passed */
	verdict_t v;
	bool skip_l[256], skip_a[256];
	char conflict[SCAN_MSG]; /* the IDs it lost to a candidate of the same rank */
} cand_t;

typedef struct set {
	cand_t *v;
	size_t n, cap;
	bool oom;
} set_t;

/* Appends a candidate (copies of path and source); NULL and s->oom when
 * out of memory. */
cand_t *nnn_cand_add(set_t *s, const char *path, int rank, const char *source);
/* Every candidate o names, with its precedence (rank 0 first): the files
 * named, then each absolute folder of NNN_PLUGIN_PATH (when o->search), then
 * the installed folder. s->oom when out of memory. */
void nnn_cands_list(set_t *s, const nnn_discover_opts_t *o);

#endif
