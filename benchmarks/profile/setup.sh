#!/usr/bin/env bash
# Issue 13 profiling schema: pff holds the fence and the trigger functions, installed from the
# migrations' own V1..V3 SQL with the Flyway placeholder substituted (never a copy that can drift);
# pf holds the scratch tables of scratch.sql. Drops and recreates both.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sql="$here/../../migrations/src/main/resources/db/fencing"
psql_args=(-h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -q test)
{
  echo 'DROP SCHEMA IF EXISTS pff CASCADE; DROP SCHEMA IF EXISTS pf CASCADE; CREATE SCHEMA pff; CREATE SCHEMA pf;'
  for f in "$sql"/V1__*.sql "$sql"/V2__*.sql "$sql"/V3__*.sql; do
    sed 's/\${fencingSchema}/pff/g' "$f"
  done
  cat "$here/scratch.sql"
} | psql "${psql_args[@]}"
