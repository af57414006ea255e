/* The plugin info as tests/plugins/fixture.c filled it up to ABI 1.1: a
 * positional local, the entry point declared before it is defined (for
 * -Wmissing-prototypes). Rebuilt unchanged against today's SDK it must
 * build and load. */
#include <nnn/plugin.h>

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d);
NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	nnn_plugin_info_t info = { sizeof info, NNN_ABI_MAJOR, NNN_ABI_MINOR, "local", "1.0" };
	return h->declare(d, &info);
}
