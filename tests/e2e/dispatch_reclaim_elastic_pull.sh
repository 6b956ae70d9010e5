#!/bin/sh
# dispatch_reclaim_elastic_pull.sh - dispatch_reclaim_elastic.sh with big in
# pull mode: its agent does not shrink copies, so the hub takes whole jobs
# there and never chooses a shrink (round 17).
# Usage: sh tests/e2e/dispatch_reclaim_elastic_pull.sh PATH_TO_MUSTER.  Ends
# with "e2e dispatch-reclaim-elastic-pull: N passed, N failed".
exec sh "$(dirname "$0")/dispatch_reclaim_elastic.sh" "$1" pull
