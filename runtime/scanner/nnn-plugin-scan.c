/* nnn-plugin-scan: loads one plugin candidate in a process of its own and
 * reports what happened on a pipe (nnn_plugin_discover, runtime/src/discover.c). */
#include "loader.h"

int main(int argc, char **argv)
{
	return nnn_plugin_scanner_main(argc, argv);
}
