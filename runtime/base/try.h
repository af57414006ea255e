/* try.h (internal): NNN_TRY, the first error wins: returns the status of
 * expr from the calling function unless it is NNN_OK. */
#ifndef NNN_TRY_H
#define NNN_TRY_H

#include <nnn/status.h>

#define NNN_TRY(expr)                          \
	do {                                   \
		nnn_status_t try_s_ = (expr);  \
		if (try_s_ != NNN_OK)          \
			return try_s_;         \
	} while (0)

#endif
