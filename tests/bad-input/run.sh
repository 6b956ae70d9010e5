#!/bin/sh
# run.sh - feeds `muster simulate` broken clusters and workloads.
#
# Usage: sh tests/bad-input/run.sh PATH_TO_MUSTER
# Each line of cases.txt names a file, its role and a message: muster must
# exit 2, print the message on stderr, and print no sanitizer report.  Files
# of this directory without a line in cases.txt fail too.  Ends with the line
# "bad-input: N passed, N failed" and exits non-zero on any failure.
set -u
MUSTER=${1:-build/asan/muster}
DIR=$(dirname "$0")
P=0; F=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
TIMEOUT=""
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 60"

fail() {
	echo "FAIL $1"; shift
	for l in "$@"; do echo "    $l"; done
	F=$((F + 1))
}

trim() {
	printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}

# run_case FILE ROLE EXPECTED
run_case() {
	path=$DIR/$1
	want=$(printf '%s' "$3" | sed "s|{}|$path|g")
	case $2 in
	workload) set -- --cluster "$DIR/ok/cluster.yaml" --workload "$path" ;;
	cluster) set -- --cluster "$path" --workload "$DIR/ok/workload.csv" ;;
	*) fail "$path" "unknown role '$2' in cases.txt"; return ;;
	esac
	# shellcheck disable=SC2086
	$TIMEOUT "$MUSTER" simulate "$@" --quiet >"$tmp/out" 2>"$tmp/err"
	rc=$?
	msg=$(head -c 600 "$tmp/err")
	if [ $rc -ne 2 ]; then
		fail "$path" "exit $rc, expected 2" "stderr: $msg"
	elif [ ! -s "$tmp/err" ]; then
		fail "$path" "nothing on stderr"
	elif grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$tmp/err"; then
		fail "$path" "sanitizer report:" "$msg"
	elif ! grep -qF -- "$want" "$tmp/err"; then
		fail "$path" "expected: $want" "got:      $msg"
	else
		P=$((P + 1))
	fi
}

if [ ! -x "$MUSTER" ]; then
	echo "bad-input: $MUSTER is not an executable"
	echo "bad-input: 0 passed, 1 failed"
	exit 1
fi

# The cases, then the files nobody wrote an expectation for.
grep -v '^[[:space:]]*#' "$DIR/cases.txt" | grep '|' >"$tmp/cases"
while IFS='|' read -r file role want; do
	run_case "$(trim "$file")" "$(trim "$role")" "$(trim "$want")"
done <"$tmp/cases"
for f in "$DIR"/*; do
	b=$(basename "$f")
	case $b in run.sh | cases.txt | ok) continue ;; esac
	if ! cut -d'|' -f1 "$tmp/cases" | sed 's/[[:space:]]*$//' | grep -qxF -- "$b"; then
		fail "$f" "no line in cases.txt"
	fi
done

echo "bad-input: $P passed, $F failed"
[ "$F" -eq 0 ]
