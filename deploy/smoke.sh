#!/bin/bash
# The compose stack, end to end, on this host: start it on a new database (deploy/compose.sh
# up -d), wait for the web's /readyz, register two sample bots, play a round robin of
# MATCHES matches to the end, and take the stack down again. Exits non-zero on any failure.
# Needs the images of deploy/build-image.sh --services.
#   deploy/smoke.sh            (ARENA_WEB_PORT: the web's port on this host, 18480)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MATCHES=${MATCHES:-10}
export ARENA_WEB_PORT=${ARENA_WEB_PORT:-18480}
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-arena-smoke}
export ARENA_SECRET_KEY=${ARENA_SECRET_KEY:-$(python3 -c 'import secrets; print(secrets.token_hex(32))')}
export ARENA_ORGANISER_TOKEN=${ARENA_ORGANISER_TOKEN:-$(python3 -c 'import secrets; print(secrets.token_hex(16))')}
export ARENA_SECRETS_KEY=${ARENA_SECRETS_KEY:-$(python3 -m arena db new-secrets-key)}
export ARENA_SERVER=http://127.0.0.1:$ARENA_WEB_PORT
arena() { (cd "$ROOT" && python3 -m arena "$@"); }
down() { "$ROOT/deploy/compose.sh" down -v >/dev/null 2>&1 || true; }
within() {  # within SECONDS WHAT COMMAND...: until COMMAND succeeds, else fail naming WHAT
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then echo "smoke: $what" >&2; return 1; fi
        sleep 1
    done
}
finished() { arena tournaments show "$1" | head -n 1 | grep -q 'finished$'; }

down
trap down EXIT
start=$SECONDS
log=$(mktemp)
"$ROOT/deploy/compose.sh" up -d >"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
rm -f "$log"
echo "smoke: stack started in $((SECONDS - start)) s"
within 120 "the web never became ready" curl -sf "$ARENA_SERVER/readyz"
echo "smoke: ready after $((SECONDS - start)) s"
arena bots register random http://cactus-random:9000 --owner smoke --games cactus >/dev/null
arena bots register heuristic http://cactus-heuristic:9000 --owner smoke --games cactus >/dev/null
ids=$(arena bots list | awk '$2 == "random" || $2 == "heuristic" { print $1 }' | paste -sd,)
tournament=$(arena tournaments start cactus --bots "$ids" --games-per-pairing "$MATCHES" \
    | sed -n 's/^tournament \([0-9]*\):.*/\1/p' | head -n 1)
played=$SECONDS
within 300 "tournament $tournament did not finish" finished "$tournament"
arena tournaments show "$tournament"
echo "smoke: $MATCHES matches played in $((SECONDS - played)) s"
# the table's rows: rank, bot, id, matches, points, per match, wins, mean rank, faults...
if arena tournaments show "$tournament" | awk 'NR > 3 && $9 != 0 { bad = 1 } END { exit !bad }'; then
    echo "smoke: a bot had faults" >&2
    exit 1
fi
