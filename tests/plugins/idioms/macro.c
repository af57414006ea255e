/* The plugin info as docs/plugins.md gives it since ABI 1.2: NNN_PLUGIN_INFO,
 * which declares the layout itself. It must go on building and loading. */
#include <nnn/plugin.h>

NNN_PLUGIN_EXPORT nnn_status_t NNN_PLUGIN_ENTRY(const nnn_host_t *h, nnn_decl_t *d)
{
	static const nnn_plugin_info_t info = NNN_PLUGIN_INFO("macro", "1.0");
	nnn_status_t st = h->declare(d, &info);           /* first: who you are, which ABI and layout */
	return st;
}
