#!/bin/sh
# check-clang.sh - compiles every library source and fuzz target with clang's
# warnings, as `make fuzz` does, without building anything.
#
# `make test` builds with gcc; the libFuzzer targets build with clang, whose
# -Wextra says more (a struct initializer that leaves out its last field, for
# one). A file clang refuses keeps `make fuzz` from building at all, which the
# gcc replays in make test never show. This runs `clang -fsyntax-only` with
# the Makefile's warning flags on src/*/*.c and fuzz/*.c (fuzz targets with
# -DMU_FUZZING), names each file it refuses with clang's first message, and
# ends with "clang: N passed, N failed". Without clang it says so and counts
# nothing (scripts/install-deps.sh installs it).
#
# Usage: scripts/check-clang.sh [REPO_DIR]
set -u
cd "${1:-.}" || exit 1
if ! command -v clang >/dev/null 2>&1; then
	echo "check-clang: clang not found: skipped (scripts/install-deps.sh installs it)"
	echo "clang: 0 passed, 0 failed"
	exit 0
fi
FLAGS="-std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc"
p=0; f=0
out=$(mktemp); trap 'rm -f "$out"' EXIT
for c in src/*/*.c fuzz/*.c; do
	case $c in fuzz/*) extra=-DMU_FUZZING ;; *) extra= ;; esac
	# shellcheck disable=SC2086
	if clang $FLAGS $extra -fsyntax-only "$c" >"$out" 2>&1; then
		p=$((p + 1))
	else
		f=$((f + 1))
		echo "check-clang: $c: $(grep -m1 -E 'error' "$out")"
	fi
done
echo "clang: $p passed, $f failed"
[ "$f" -eq 0 ]
