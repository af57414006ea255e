/* graph.c: `nnnkit graph MODEL`: the layer chain as Graphviz DOT. */
#include <string.h>

#include "scan.h"

static int run(const cli_args_t *a, cli_env_t *env);

static const cli_opt_t graph_opts[] = {
	{ "output", 'o', CLI_OUT, CLI_DASH, "FILE", .help = "write to FILE atomically (default: stdout)" },
	{ NULL },
};

const cli_cmd_t cmd_graph = {
	.name = "graph",
	.summary = "the layer graph as Graphviz DOT (nnnkit graph m.nnn | dot -Tsvg > m.svg)",
	.main = run,
	.opts = CLI_OPTS(graph_opts, cli_opts_input_shape),
	.pos = cli_picture_pos,
	.exits = CLI_EXITS_MODEL,
	.help = "usage: nnnkit graph [--input-shape 1,28,28,1] [-o FILE] MODEL\n"
	"Prints a Graphviz digraph: an input node, one node per layer (type, activation, its own\n"
	"fields, input -> output shape) in file order, and an output node. Without --input-shape,\n"
	"shapes show what each layer's own fields fix ('?' is unknown). An invalid model is drawn\n"
	"as far as it decodes, ending in a node that names the first problem (exit 1).\n",
};

/* Text inside a DOT double-quoted string: quotes and backslashes escaped,
 * controls and bytes that are not UTF-8 shown as '?' (NNN_ESC_DOT). */
static void dot_text(FILE *o, const char *text)
{
	cli_esc_print(o, text ? text : "", text ? strlen(text) : 0, NNN_ESC_DOT);
}

static nnn_status_t render(FILE *o, cli_scan_t *s, const char *path, nnn_diags_t *d)
{
	char buf[NNN_PATH_MAX + NNN_MSG_MAX + 512];
	nnn_status_t st = cli_scan_layers(s, NULL, NULL, d);
	if (st != NNN_OK)
		return st;
	fputs("digraph nnn {\n  graph [labelloc=t, fontname=\"Helvetica\", label=\"", o);
	if (s->desc)
		dot_text(o, s->desc); /* NUL-terminated: an embedded NUL ends the label early, harmlessly */
	fputs("\\n", o);
	dot_text(o, path);
	fputs("\"];\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef4fb\", fontname=\"Helvetica\"];\n", o);
	fputs("  input [shape=oval, fillcolor=white, label=\"input\\n", o);
	dot_text(o, s->nlayers ? cli_scan_str(s, s->layers[0].in) : "?");
	fputs("\"];\n", o);
	for (size_t i = 0; i < s->nlayers; i++) {
		const cli_layer_t *L = &s->layers[i];
		const char *act = cli_scan_str(s, L->act), *summary = cli_scan_str(s, L->summary);
		fprintf(o, "  layer%zu [label=\"#%zu ", i, i);
		dot_text(o, cli_scan_str(s, L->type));
		fputs("\\n", o);
		dot_text(o, act ? act : "?");
		if (summary) {
			fputs("\\n", o);
			dot_text(o, summary);
		}
		fputs("\\n", o);
		dot_text(o, cli_scan_str(s, L->in));
		fputs(" -> ", o);
		dot_text(o, cli_scan_str(s, L->out));
		fputs("\"];\n", o);
	}
	if (s->status == NNN_OK) {
		fputs("  output [shape=oval, fillcolor=white, label=\"output\\n", o);
		dot_text(o, s->nlayers ? cli_scan_str(s, s->layers[s->nlayers - 1].out) : "?");
		fputs("\"];\n", o);
	} else {
		fputs("  problem [shape=octagon, color=red, fillcolor=\"#fdecea\", label=\"", o);
		if (s->problems.n)
			dot_text(o, nnn_diag_format(&s->problems.v[0], buf, sizeof buf));
		fprintf(o, "\\nproblems found: %zu (nnnkit validate lists them)\"];\n", s->problems.n + s->problems.dropped);
	}
	fputs("  input", o);
	for (size_t i = 0; i < s->nlayers; i++)
		fprintf(o, " -> layer%zu", i);
	fprintf(o, " -> %s;\n}\n", s->status == NNN_OK ? "output" : "problem");
	return NNN_OK;
}

static int run(const cli_args_t *a, cli_env_t *env)
{
	return cli_picture(a, env, render);
}
