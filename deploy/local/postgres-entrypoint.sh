#!/bin/sh
# First start: a cluster whose superuser is $POSTGRES_USER (password $POSTGRES_PASSWORD,
# asked of every network client) with a database $POSTGRES_DB; then the server.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" > "$pwfile"
    # UTF-8 as in the official image: an image without locales would get SQL_ASCII, whose
    # text psycopg returns as bytes
    initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        pg_ctl --wait --silent -o "-c listen_addresses=''" start
        psql --username="$POSTGRES_USER" --dbname=postgres --quiet \
            --command="CREATE DATABASE \"$POSTGRES_DB\""
        pg_ctl --wait --silent --mode=fast stop
    fi
fi
exec postgres -c listen_addresses='*'
