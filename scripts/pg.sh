# Source this file: `pg_start` runs a throwaway PostgreSQL on 127.0.0.1 and exports
# MATH2_TEST_PG_URL; `pg_stop` removes it. Used by scripts/test.sh (and so by CI).
pg_start() {
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "scripts/pg.sh: no PostgreSQL server binaries found (install Debian's postgresql)" >&2
    return 1
  fi
  PG_DIR=$(mktemp -d /tmp/math2-pg.XXXXXX)
  PG_PORT=${MATH2_TEST_PG_PORT:-$((20000 + RANDOM % 20000))}
  local run=()
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$PG_DIR"
    run=(runuser -u postgres --)
  fi
  "${run[@]}" "$bindir/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  "${run[@]}" "$bindir/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null \
    || { cat "$PG_DIR/server.log" >&2; return 1; }
  PG_RUN=("${run[@]}")
  PG_BIN=$bindir
  export MATH2_TEST_PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
  echo "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') for tests at $MATH2_TEST_PG_URL"
}

pg_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  unset PG_DIR
}
