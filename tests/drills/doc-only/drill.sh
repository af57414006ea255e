# shellcheck shell=bash disable=SC2034 # (sourced by tests/drills/lib.sh)
# A doc-only edit of the schema. Proves: make -j recompiles the generated
# source's object and nothing else (the header's bytes do not change), the
# generated reference follows, and the lock does not change.
DRILL_KIND=compatible
# A doc changes no behaviour: the one build, the reference and the lock are the proof.
DRILL_SUITE=no

check_built() {
	local cc
	cc=$(sed -n 's/^  CC     //p' "$DRILL_OUT/make.log")
	echo "compiled: $cc"
	# links name no object; every object compiled must be schema_gen.o
	if echo "$cc" | grep '\.o$' | grep -vx 'build/obj/gen/schema_gen.o'; then
		die "a doc-only edit recompiled the objects above"
	fi
	grep -qF -- "$DOC" docs/format.md || die "docs/format.md lacks the new doc"
}

check() {
	cmp schema/nnn.lock "$DRILL_OUT/nnn.lock.before" || die "make lock changed the lock after a doc-only edit"
}
