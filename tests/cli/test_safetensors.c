/* test_safetensors.c: `nnnkit convert` to safetensors and back, byte for
 * byte, by --to and by OUT's extension; edit writes it by OUT's name; a
 * safetensors checkpoint nnnkit did not write is refused, its tensors named. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "shell.h"
#include "tmpdir.h"

#define PFX "nnnst."

TestSuite(safetensors_cli, .fini = t_tmpdir_remove, .timeout = 120);

static const char *setup(void)
{
	const char *dir = t_tmpdir(PFX);
	cr_assert_eq(t_sh(NULL, 0, "cd %s && %s/mkexample m.nnn x.npy >/dev/null", dir, t_build_dir()), 0);
	return dir;
}

Test(safetensors_cli, convert_both_ways_byte_for_byte)
{
	char out[8192];
	const char *dir = setup(), *k = nnnkit_bin();
	int rc = t_sh(out, sizeof out,
	              "cd %s && %s convert m.nnn m.safetensors && %s convert m.safetensors back.nnn && cmp m.nnn back.nnn "
	              "&& %s convert m.nnn st.bin --to safetensors && cmp st.bin m.safetensors && "
	              "%s convert st.bin again.nnn --to nnn && cmp m.nnn again.nnn && "
	              "%s convert m.nnn m.json && %s convert m.json j.safetensors && cmp j.safetensors m.safetensors 2>&1",
	              dir, k, k, k, k, k, k);
	cr_assert_eq(rc, 0, "%s", out);
	/* Standard safetensors: the header length, then the JSON header. */
	rc = t_sh(out, sizeof out, "cd %s && od -A n -c -j 8 -N 16 m.safetensors | tr -d ' \\n'", dir);
	cr_assert(rc == 0 && !strncmp(out, "{\"__metadata__\"", 15), "%s", out);
}

Test(safetensors_cli, edit_writes_the_form_of_its_output_name)
{
	char out[8192];
	const char *dir = setup(), *k = nnnkit_bin();
	int rc = t_sh(out, sizeof out,
	              "cd %s && %s edit m.nnn -o e.safetensors --description edited && %s info e.safetensors 2>&1 && "
	              "od -A n -c -j 8 -N 2 e.safetensors | tr -d ' \\n'",
	              dir, k, k);
	cr_assert(rc == 0 && strstr(out, "\"edited\"") && strstr(out, "{\""), "%s", out);
}

Test(safetensors_cli, a_checkpoint_is_refused_saying_what_it_holds)
{
	char out[8192];
	const char *dir = setup();
	const char hdr[] = "{\"w\": {\"dtype\": \"BF16\", \"shape\": [2, 3], \"data_offsets\": [0, 12]}}";
	unsigned char len[8] = { (unsigned char)(sizeof hdr - 1) };
	FILE *f = fopen(t_tmppath(PFX, "hf.safetensors"), "wb");
	cr_assert_not_null(f);
	fwrite(len, 1, 8, f);
	fwrite(hdr, 1, sizeof hdr - 1, f);
	fwrite("\0\0\0\0\0\0\0\0\0\0\0\0", 1, 12, f);
	fclose(f);
	int rc = t_sh(out, sizeof out, "cd %s && %s info hf.safetensors 2>&1", dir, nnnkit_bin());
	cr_assert_eq(rc, 1, "%s", out);
	cr_assert(strstr(out, "no nnnkit metadata") && strstr(out, "w (BF16, [2, 3])") && strstr(out, "nnnkit build"),
	          "%s", out);
	rc = t_sh(out, sizeof out, "cd %s && %s convert m.nnn m.st 2>&1", dir, nnnkit_bin());
	cr_assert(rc == 2 && strstr(out, "--to safetensors"), "%s", out);
}

/* One name for a tensor: each .npy file export writes is a tensor of the
 * same name in the safetensors file (one function makes both). */
Test(safetensors_cli, tensors_are_named_as_export_names_them)
{
	char out[8192];
	const char *dir = setup(), *k = nnnkit_bin();
	int rc = t_sh(out, sizeof out,
	              "cd %s && %s convert m.nnn m.safetensors && %s export m.nnn exp && n=0 && "
	              "for f in exp/*.npy; do t=$(basename \"$f\" .npy); n=$((n+1)); "
	              "grep -aq \"\\\"$t\\\": {\\\"dtype\\\": \\\"F32\\\"\" m.safetensors || { echo \"$t missing\"; exit 1; }; "
	              "done; echo $n 2>&1",
	              dir, k, k);
	cr_assert(rc == 0 && atoi(out) >= 4, "%s", out);
}
