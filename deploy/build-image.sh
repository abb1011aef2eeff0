#!/bin/bash
# Builds the arena's image with podman, on a Debian base that debootstrap makes here, and
# (with --services) stand-ins for the postgres and redis images from Debian's packages:
# for a host that reaches Debian's mirrors and PyPI but no image registry.
#
#   deploy/build-image.sh [--services]     (as root: debootstrap and podman need it)
#
# Then the compose stack: deploy/compose.sh up -d (it says which settings it needs)
# Environment: SUITE (bookworm), MIRROR (Debian's), TAG (card-bot-arena), BASE_TAG,
# SSL_CERT_FILE (certificates pip trusts during the build).
set -euo pipefail

SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
TAG=${TAG:-card-bot-arena}
BASE_TAG=${BASE_TAG:-localhost/arena-debian:$SUITE}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$ROOT/deploy/podman-env.sh"

if ! podman image exists "$BASE_TAG"; then
    rootfs=$(mktemp -d)
    trap 'rm -rf "$rootfs"' EXIT
    echo "build-image: debootstrap $SUITE into $rootfs"
    # Python 3.11 and its venv module: what the Dockerfile needs of its base
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        "$SUITE" "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 \
        || { tail -n 20 "$rootfs.log" >&2; exit 1; }
    rm -f "$rootfs.log"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE_TAG"
fi

# a host whose HTTPS passes a proxy of its own trusts it in SSL_CERT_FILE: so does pip here
trust=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
    trust=(--volume "$SSL_CERT_FILE:/run/arena-ca.crt:ro" --build-arg CA_BUNDLE=/run/arena-ca.crt)
fi
podman build --file "$ROOT/deploy/Dockerfile" --build-arg "BASE=$BASE_TAG" "${trust[@]}" \
    --tag "$TAG" "$ROOT"

if [ "${1:-}" = --services ]; then
    for service in postgres redis; do
        podman build --file "$ROOT/deploy/local/$service.Containerfile" \
            --build-arg "BASE=$BASE_TAG" --tag "localhost/arena-$service" "$ROOT"
    done
fi
