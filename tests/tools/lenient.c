/* lenient: a deliberately lenient .nnn decoder for the conformance tests.
 * It is nnnkit's own validator with one check switched off: files whose only
 * problems are dims that do not multiply to the data count are accepted.
 * A conformance run must catch it. Exit 0 accepts, 1 rejects. */
#include <stdio.h>

#include <nnn/file.h>
#include <nnn/validate.h>

int main(int argc, char **argv)
{
	const unsigned char *data;
	size_t size;
	nnn_diags_t d;
	int accept = 0;
	if (argc != 2)
		return 2;
	nnn_diags_init(&d);
	if (nnn_map(argv[1], &data, &size, &d) == NNN_OK) {
		accept = 1;
		if (nnn_validate_bytes(data, size, NULL, NULL, &d) != NNN_OK)
			for (size_t i = 0; i < d.n; i++)
				accept &= d.v[i].code == NNN_E_DIM_MISMATCH || d.v[i].code == NNN_E_PARAM_COUNT;
		nnn_unmap(data, size);
	}
	nnn_diags_free(&d);
	return accept ? 0 : 1;
}
