#!/bin/sh
# install.sh: what `make install` writes, recorded, and `make uninstall`
# removing exactly that (Makefile, "install").
#
# Every step takes the installation root ROOT (DESTDIR and PREFIX) first.
# The record is ROOT/share/nnnkit/installed-files, one line per thing, its
# path relative to ROOT:
#   f PATH   a file or symbolic link install wrote
#   d PATH   a folder install made (it was not there before)
# Uninstall removes every f, then every d left empty, deepest first: never a
# file install did not write, never a folder holding someone else's file.
#
#   install.sh begin ROOT                   starts the record (keeping the
#                                           previous install's entries)
#   install.sh file ROOT MODE DIR SRC...    installs files into ROOT/DIR
#   install.sh as ROOT MODE SRC DEST        installs one file as ROOT/DEST
#   install.sh link ROOT TARGET DEST        ROOT/DEST -> TARGET
#   install.sh text ROOT MODE DEST          ROOT/DEST from stdin
#   install.sh pyc ROOT PYTHON DIR PREFIX   compiles ROOT/DIR/*.py with PYTHON
#                                           into ROOT/DIR/__pycache__, naming
#                                           them PREFIX/DIR/*.py (not DESTDIR's)
#   install.sh end ROOT                     writes the record
#   install.sh uninstall ROOT               removes what the record lists
set -eu

RECORD=share/nnnkit/installed-files

die() {
	echo "install.sh: $*" >&2
	exit 2
}

step=$1
root=$2
shift 2
[ -n "$root" ] || die "no installation root (PREFIX)"
new="$root/$RECORD.new"

note() {
	printf '%s %s\n' "$1" "$2" >> "$new"
}

# A relative path of ours: no "..", not absolute, no odd characters (the
# record must not be able to name a file elsewhere).
check_rel() {
	case "$1" in
	/* | *..* | '' | *[!A-Za-z0-9_./+-]*) die "refusing path '$1' (not a plain path under the prefix)" ;;
	esac
}

# Makes ROOT/DIR and the folders above it, noting each one made.
mkdirs() {
	check_rel "$1"
	case "$1" in */*) mkdirs "${1%/*}" ;; esac
	if [ ! -d "$root/$1" ]; then
		mkdir "$root/$1"
		note d "$1"
	fi
}

case $step in
begin)
	made=""
	mkdir -p "$root"
	for d in share share/nnnkit; do
		if [ ! -d "$root/$d" ]; then
			mkdir "$root/$d"
			made="$made d $d"
		fi
	done
	: > "$new"
	for d in $made; do
		[ "$d" = d ] || note d "$d"
	done
	# Folders the previous install made stay ours; so do its files, until
	# uninstall (a file a newer version no longer installs is still ours).
	if [ -f "$root/$RECORD" ]; then
		grep -E '^[fd] ' "$root/$RECORD" >> "$new" || true
	fi
	;;
file)
	mode=$1 dir=$2
	shift 2
	mkdirs "$dir"
	for src in "$@"; do
		check_rel "$dir/${src##*/}"
		install -m "$mode" "$src" "$root/$dir/"
		note f "$dir/${src##*/}"
	done
	;;
as)
	mode=$1 src=$2 dest=$3
	check_rel "$dest"
	mkdirs "${dest%/*}"
	install -m "$mode" "$src" "$root/$dest"
	note f "$dest"
	;;
link)
	target=$1 dest=$2
	check_rel "$dest"
	mkdirs "${dest%/*}"
	ln -sf "$target" "$root/$dest"
	note f "$dest"
	;;
text)
	mode=$1 dest=$2
	check_rel "$dest"
	mkdirs "${dest%/*}"
	cat > "$root/$dest"
	chmod "$mode" "$root/$dest"
	note f "$dest"
	;;
pyc)
	# Hash-checked, so that they stay valid whatever the files' times, and
	# recorded, so that importing the package (which would write them)
	# leaves nothing behind uninstall does not know of. A traceback names
	# the file where it will be, PREFIX/DIR, not where DESTDIR stages it.
	python=$1 dir=$2 prefix=$3
	check_rel "$dir/__pycache__"
	mkdirs "$dir/__pycache__"
	tag=$("$python" -c 'import sys; print(sys.implementation.cache_tag)')
	"$python" -m compileall -q -l --invalidation-mode checked-hash -d "$prefix/$dir" "$root/$dir" >/dev/null
	for f in "$root/$dir/__pycache__"/*."$tag".pyc; do
		[ -f "$f" ] || die "$python wrote no $dir/__pycache__/*.$tag.pyc"
		check_rel "$dir/__pycache__/${f##*/}"
		note f "$dir/__pycache__/${f##*/}"
	done
	;;
end)
	note f "$RECORD"
	sort -u "$new" > "$new.sorted"
	rm -f "$new"
	mv "$new.sorted" "$root/$RECORD"
	chmod 0644 "$root/$RECORD"
	;;
uninstall)
	if [ ! -f "$root/$RECORD" ]; then
		echo "install.sh: $root/$RECORD: no record of an installation here; nothing removed (an install" \
			"older than the record: install this version over it, then uninstall)" >&2
		exit 0
	fi
	# Read whole and checked before anything is removed (the record is
	# one of the files).
	record=$(cat "$root/$RECORD")
	printf '%s\n' "$record" | while read -r kind path; do
		case $kind in f | d) check_rel "$path" ;; *) die "$root/$RECORD: a line of kind '$kind'" ;; esac
	done
	printf '%s\n' "$record" | sed -n 's/^f //p' | while read -r path; do
		rm -f "$root/$path" || echo "install.sh: $root/$path: not removed" >&2
	done
	# Deepest first; a folder with anything left in it stays.
	printf '%s\n' "$record" | sed -n 's/^d //p' | awk '{ print gsub("/", "/"), $0 }' | sort -rn | cut -d' ' -f2- |
	while read -r path; do
		rmdir "$root/$path" 2>/dev/null || true
	done
	;;
*)
	die "unknown step '$step'"
	;;
esac
