#!/bin/bash
# podman-compose on deploy/compose.yaml with the images build-image.sh made here (the
# arena's, and the postgres and redis stand-ins) and this host's podman adjustments.
#   ARENA_SECRET_KEY=... ARENA_ORGANISER_TOKEN=... ARENA_SECRETS_KEY=... deploy/compose.sh up -d
#   deploy/compose.sh ps | logs web | down -v
# `up -d` starts the stack in two steps, the migration first: podman before 4.4 cannot
# start a container whose dependency depends on another ("depends on container ... not
# found in input list"), and before 4.6 it does not wait for a health check.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/deploy/podman-env.sh"
export ARENA_POSTGRES_IMAGE=${ARENA_POSTGRES_IMAGE:-localhost/arena-postgres}
export ARENA_REDIS_IMAGE=${ARENA_REDIS_IMAGE:-localhost/arena-redis}
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-arena}
compose=(podman-compose --project-name "$COMPOSE_PROJECT_NAME" --file "$ROOT/deploy/compose.yaml")

if [ "$*" != "up -d" ]; then
    exec "${compose[@]}" "$@"
fi
"${compose[@]}" up -d postgres redis migrate
migrate=$(podman ps -a --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
    --filter label=com.docker.compose.service=migrate --format '{{.Names}}' | head -n 1)
status=$(podman wait "$migrate")
if [ "$status" != 0 ]; then
    podman logs --tail 5 "$migrate" >&2
    echo "compose.sh: the migration failed (exit $status): the rest is not started" >&2
    exit 1
fi
mapfile -t rest < <("${compose[@]}" config --services | grep -vxE 'postgres|redis|migrate')
"${compose[@]}" up -d --no-deps "${rest[@]}"
