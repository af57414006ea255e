/* mem.c: large buffers (packed weights), as libnnn allocates its own: the
 * very code of runtime/src/mem.c, compiled in here (a plugin never links
 * libnnn; with -fvisibility=hidden this copy stays private). */
#include "../../runtime/src/mem.c"
