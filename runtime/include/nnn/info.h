/* nnn/info.h: what a model is, in one screen: the text of `nnnkit info`
 * (and of the Python package's repr of a model), made in one place.
 *
 * The text: the file and its size, the description (quoted, escaped for a
 * terminal), the parameter count, the layer count, the model's input and
 * output shapes (or what is unknown and how to give it), then a table of
 * layers: type, its own fields, activation and its parameters, dropout,
 * output shape, tensor shapes, parameter count, bytes, and the plugin whose
 * kernel runs it ('+' when another plugin runs its activation; "none" when
 * no plugin does). Every text from the file, a plugin or the caller (the
 * file's name) is escaped: control and bidirectional characters never
 * reach a terminal raw.
 */
#ifndef NNN_INFO_H
#define NNN_INFO_H

#include <nnn/api.h>
#include <nnn/context.h>
#include <nnn/shape.h>

/* How the text names the input shape a caller gives (its hint when the
 * layers do not fix the whole input). */
typedef enum nnn_info_say {
	NNN_INFO_SAY_CLI = 0,    /* nnnkit's option: "--input-shape 1,D1,D2,1" */
	NNN_INFO_SAY_PYTHON = 1, /* the Python package's argument: "input_shape=(1, D1, D2, 1)" */
} nnn_info_say_t;

/* The text's form. */
typedef enum nnn_info_form {
	NNN_INFO_TEXT = 0,     /* aligned columns, for a terminal */
	NNN_INFO_MARKDOWN = 1, /* a list of the facts and a table, every value escaped (nnnkit info --markdown) */
} nnn_info_form_t;

typedef struct nnn_info_opts {
	uint32_t size;            /* sizeof(nnn_info_opts_t) */
	uint32_t say;             /* nnn_info_say_t */
	const char *file;         /* the file's name, shown escaped; NULL: a model in memory (its
	                             encoded size is shown, and no bytes per layer) */
	uint64_t file_size;       /* the file's size in bytes, with `file` */
	const nnn_shape_t *input; /* the input shape given; NULL: the input the layers fix */
	/* Added later: read only when `size` covers it (text before). */
	uint32_t form;            /* nnn_info_form_t */
} nnn_info_opts_t;

/* The shapes info shows, one per layer (out: m->layer_count entries): from
 * `input` when given; else from the input the layers fix, with a batch of
 * 1, when they fix all of it (a Dense first layer: [1, its inputs]) and the
 * shape engine takes it; else partial, as nnn_model_shapes gives them
 * without an input. *exact (may be NULL): every shape is known. A given
 * input that does not fit returns the first problem's code, every problem
 * in diags (may be NULL), as nnn_model_shapes does; without one, NNN_OK
 * (what the layers do not fix is not a problem here). */
NNN_API NNN_NODISCARD nnn_status_t nnn_model_info_shapes(const nnn_model_t *m, const nnn_shape_t *input,
                                                         nnn_layer_shapes_t *out, bool *exact, nnn_diags_t *diags);

/* The text into buf, as snprintf does: at most `size` bytes, NUL-terminated
 * when size > 0 (size 0 writes nothing, buf may then be NULL); returns the
 * length of the whole text, without its NUL, so a caller can size its
 * buffer (returned + 1) and call again. Each line ends with '\n'. ctx (may
 * be NULL: every kernel "none") names the plugins; opts may be NULL (a
 * model in memory, nnnkit's words). A given input that does not fit shows
 * the partial shapes and says so; the problem itself is
 * nnn_model_info_shapes'. */
NNN_API size_t nnn_model_info(const nnn_ctx_t *ctx, const nnn_model_t *m, const nnn_info_opts_t *opts, char *buf,
                              size_t size);

/* The plugin whose kernel runs layer L, as the text's table names it: the
 * file name of its library ("builtin.so"), with '+' when another plugin
 * runs the layer's activation, or "none" when no plugin runs the layer
 * (ctx NULL: always). Into buf as snprintf does; returns the length. */
NNN_API size_t nnn_layer_kernel_name(const nnn_ctx_t *ctx, const nnn_layer_t *L, char *buf, size_t size);

#endif
