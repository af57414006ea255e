/* The plugin info as docs/plugins.md gave it up to ABI 1.1 (and
 * examples/plugin-pool-swish/poolswish.c used it): positional, so it leaves
 * schema_layout (ABI 1.2) 0. Rebuilt unchanged against today's SDK it must
 * build and load (test sdk/every_fragment_feature_builds_installed). */
#include <nnn/plugin.h>

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	static const nnn_plugin_info_t info = { sizeof info, NNN_ABI_MAJOR, NNN_ABI_MINOR, "positional", "1.0" };
	nnn_status_t st = h->declare(d, &info);           /* first: who you are, which ABI */
	return st;
}
