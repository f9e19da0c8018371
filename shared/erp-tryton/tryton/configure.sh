#!/usr/bin/env bash
# configure.sh <cache-dir> <data-dir> <database> <review-url>
#
# Tells the draftline module of <database> (made by setup.sh) where
# draftline's review pages are: `draftline.configuration` review_url, from
# which the purchase and sale forms link an agent draft to its run
# (<review-url>/runs/<run>). `draftline serve --erp tryton` runs it once it
# listens. Safe while trytond serves the database (one SQLite write, and
# Tryton reads the value on every form it sends). An empty <review-url>
# clears it.
set -euo pipefail
if [ $# -ne 4 ]; then
    echo "usage: $0 <cache-dir> <data-dir> <database> <review-url>" >&2
    exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cache_dir=$(cd "$1" && pwd)
data_dir=$(cd "$2" && pwd)
database=$3
check_database_name "$database"
case "$4" in
    ''|http://*|https://*) ;;
    *) echo "the review URL must be an http(s) URL: $4" >&2; exit 2 ;;
esac
venv=$cache_dir/venv-$(env_hash)
db_file=$data_dir/$database.sqlite
if [ ! -e "$venv/.complete" ] || [ ! -e "$db_file" ]; then
    echo "configure.sh: run setup.sh $1 $2 $database first" >&2
    exit 1
fi
"$venv/bin/python" - "$db_file" "$4" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
url = sys.argv[2] or None
with db:
    # the singleton: the first row, if an administrator saved one
    row = db.execute(
        "SELECT id FROM draftline_configuration ORDER BY id LIMIT 1").fetchone()
    if row:
        db.execute(
            "UPDATE draftline_configuration SET review_url = ?,"
            " write_uid = 0, write_date = CURRENT_TIMESTAMP WHERE id = ?",
            (url, row[0]))
    else:
        db.execute(
            "INSERT INTO draftline_configuration"
            " (id, review_url, create_uid, create_date)"
            " VALUES (1, ?, 0, CURRENT_TIMESTAMP)", (url,))
db.close()
PY
