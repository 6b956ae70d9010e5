#!/bin/sh
# install-deps.sh - make sure the Debian packages muster builds with are here.
#
# Slurm (slurmctld, slurmd and its client commands) is here for `muster eval
# slurm`, which runs a real Slurm on loopback to compare against; no database
# (slurmdbd) is needed, it reads Slurm's job completion log.
#
# Checks each package with dpkg-query.  When some are missing it installs them
# with apt-get if it runs as root (as in CI); otherwise it prints the exact
# apt-get line to run and fails.  It is quick when nothing is missing, so the
# Makefile runs it before every build.
set -eu
PKGS="gcc make libc6-dev libyaml-dev clang libclang-rt-14-dev time libmicrohttpd-dev libgnutls28-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev libjemalloc-dev curl openssl python3 chromium kubectl python3-kubernetes nodejs slurmctld slurmd slurm-client faketime"
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
# npm: Debian's package, unless a nodejs build that bundles it is installed
# (the NodeSource nodejs package conflicts with Debian's npm)
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "install-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run:  sudo apt-get install -y$missing" >&2
	exit 1
fi
