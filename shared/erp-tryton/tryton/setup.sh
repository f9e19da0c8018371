#!/usr/bin/env bash
# setup.sh <cache-dir> <data-dir> <database-name>
#
# Makes a Tryton 8.0 (LTS) database with the draftline module and the demo
# data, ready to be served by serve.sh with Tryton's web client, and prints
# on stdout (everything else goes to stderr):
#   key <KEY>               its REST key: the key of the Tryton user
#                           `draftline`, the module's least-privilege user
#                           (modules/draftline/access.xml; MAPPING.md
#                           "Tryton users and access"), never admin's
#   web-client <version>    when the web client (sao) is installed
#   person <login> <password>  one line per demo person's Tryton user
# Idempotent; fast when done:
#   <cache-dir>/venv-<H>/        the Python venv (H = requirements + module)
#   <cache-dir>/sao-<S>/         the web client, npm ci of sao/ (S = its lock)
#   <cache-dir>/template-<T>.sqlite  a seeded database (T = H + seed.py + common.sh)
#   <data-dir>/<database>.sqlite the database (a copy of the template)
#   <data-dir>/trytond.conf      the configuration serve.sh uses
#   <data-dir>/admin-password    the admin password (for the Tryton client)
#   <data-dir>/people            the demo people's passwords (local use only)
# Nothing is written outside the two dirs. Suggested cache dir:
# ~/.cache/draftline/tryton (XDG_CACHE_HOME/draftline/tryton). Without npm
# (DRAFTLINE_NPM names another) the web client is left out, with a warning.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 <cache-dir> <data-dir> <database-name>" >&2
    exit 2
fi
# stdout is for the key line only.
exec 3>&1 1>&2

. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

mkdir -p "$1" "$2"
cache_dir=$(cd "$1" && pwd)
data_dir=$(cd "$2" && pwd)
database=$3
check_database_name "$database"

python=${DRAFTLINE_PYTHON:-}
if [ -z "$python" ]; then
    for candidate in python3.11 python3.12 python3.13 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then python=$candidate; break; fi
    done
fi
if [ -z "$python" ] || ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "setup.sh needs Python >= 3.10 (set DRAFTLINE_PYTHON)" >&2
    exit 1
fi

exec 9>"$cache_dir/.lock"
flock 9

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# 1. The venv.
hash=$(env_hash)
venv=$cache_dir/venv-$hash
if [ ! -e "$venv/.complete" ]; then
    start=$(now)
    echo "tryton: creating venv $venv" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-deps -r "$tryton_dir/requirements.txt"
    site=$("$venv/bin/python" -c 'import trytond.modules, os; print(os.path.dirname(trytond.modules.__file__))')
    cp -R "$tryton_dir/modules/draftline" "$site/draftline"
    "$venv/bin/python" -m compileall -q "$site/draftline" >/dev/null
    touch "$venv/.complete"
    echo "tryton: venv ready in $(took "$start")" >&2
fi

# 2. The web client: sao of the same series, from the npm registry.
sao=$cache_dir/sao-$(sao_hash)
sao_root=
if [ -e "$sao/.complete" ]; then
    sao_root=$sao/node_modules/tryton-sao
elif command -v "${DRAFTLINE_NPM:-npm}" >/dev/null 2>&1; then
    start=$(now)
    echo "tryton: installing the web client (npm ci) in $sao" >&2
    rm -rf "$sao"
    build=$(mktemp -d "$cache_dir/build.XXXXXX")
    trap 'rm -rf "$build"' EXIT
    # Without it the REST API (the tools) still works: a failed install is
    # a warning, and the next setup tries again.
    if install_sao "$build"; then
        mv "$build" "$sao"
        touch "$sao/.complete"
        sao_root=$sao/node_modules/tryton-sao
        echo "tryton: web client ready in $(took "$start")" >&2
    else
        rm -rf "$build"
        echo "tryton: the web client could not be installed (above); serving Tryton without it" >&2
    fi
    trap - EXIT
else
    echo "tryton: no npm (set DRAFTLINE_NPM): Tryton's web client is not installed" >&2
fi

conf=$data_dir/trytond.conf
write_conf "$data_dir" "$conf" "$sao_root"

# Venvs, web clients and templates of other versions of these files are
# never used again.
template_key=$(template_hash)
for old in "$cache_dir"/venv-* "$cache_dir"/sao-* "$cache_dir"/template-* "$cache_dir"/build.*; do
    case "$old" in
        "$venv"|"$sao"|"$cache_dir/template-$template_key".*) ;;
        *) if [ -e "$old" ]; then
               echo "tryton: removing old $old" >&2
               rm -rf "$old"
           fi ;;
    esac
done

# 3. The seeded template, then the database.
db_file=$data_dir/$database.sqlite
if [ ! -e "$db_file" ]; then
    template=$cache_dir/template-$template_key.sqlite
    if [ ! -e "$template" ]; then
        start=$(now)
        build=$(mktemp -d "$cache_dir/build.XXXXXX")
        trap 'rm -rf "$build"' EXIT
        build_template "$venv" "$build"
        mv "$build/admin-password" "$template.admin-password"
        mv "$build/people" "$template.people"
        mv "$build/template.sqlite" "$template"
        rm -rf "$build"
        trap - EXIT
        echo "tryton: template $template ready in $(took "$start")" >&2
    fi
    start=$(now)
    cp "$template" "$db_file.tmp"
    # A fresh REST key per database, written before the database is visible:
    # the draftline user's (the module's least-privilege user, access.xml),
    # the only key in it.
    "$venv/bin/python" - "$db_file.tmp" <<'PY'
import secrets, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
with db:
    row = db.execute(
        "SELECT id FROM res_user WHERE login = 'draftline'").fetchone()
    if row is None:
        sys.exit("the template has no Tryton user 'draftline'")
    db.execute("DELETE FROM res_user_application")
    db.execute(
        "INSERT INTO res_user_application"
        " (key, \"user\", application, state, create_uid, create_date)"
        " VALUES (?, ?, 'rest', 'validated', 0, CURRENT_TIMESTAMP)",
        (secrets.token_hex(32), row[0]))
db.close()
PY
    cp "$template.admin-password" "$data_dir/admin-password"
    cp "$template.people" "$data_dir/people"
    chmod 600 "$data_dir/admin-password" "$data_dir/people"
    # A write-ahead log left by an earlier database of this name would be
    # replayed into the new one.
    rm -f "$db_file-wal" "$db_file-shm" "$db_file-journal"
    mv "$db_file.tmp" "$db_file"
    echo "tryton: $db_file created from the template in $(took "$start")" >&2
fi

# 4. The REST key: a res.user.application (application rest, validated) of
# the Tryton user `draftline`, never of admin.
key=$("$venv/bin/python" - "$db_file" <<'PY'
import secrets, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
user = db.execute(
    "SELECT id FROM res_user WHERE login = 'draftline'").fetchone()
if user is None:
    sys.exit(f"{sys.argv[1]} has no Tryton user 'draftline': it was made by "
        "an older setup.sh; remove it (and its -wal, -shm files) to get a "
        "fresh copy of the template")
row = db.execute(
    "SELECT key FROM res_user_application WHERE \"user\" = ?"
    " AND application = 'rest' AND state = 'validated' ORDER BY id LIMIT 1",
    user).fetchone()
if row is None:
    key = secrets.token_hex(32)
    with db:
        db.execute(
            "INSERT INTO res_user_application"
            " (key, \"user\", application, state, create_uid, create_date)"
            " VALUES (?, ?, 'rest', 'validated', 0, CURRENT_TIMESTAMP)",
            (key, user[0]))
    print(key)
else:
    print(row[0])
PY
)
echo "key $key" >&3
if [ -n "$sao_root" ]; then
    version=$("$venv/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
        "$sao_root/package.json")
    echo "web-client $version" >&3
fi
if [ -e "$data_dir/people" ]; then
    while read -r login password; do
        echo "person $login $password" >&3
    done <"$data_dir/people"
fi
