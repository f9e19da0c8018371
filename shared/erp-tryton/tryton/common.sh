# Sourced by setup.sh and serve.sh: where things live. Not run on its own.
# DRAFTLINE_TRYTON_DIR: this folder (requirements.txt, modules/, seed.py).

tryton_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The demo story seed.py reads: draftline-erp's demo/demo.json, written
# next to these files where the binary wrote them (src/embedded.rs), or in
# the source tree.
demo_file() {
    if [ -e "$tryton_dir/demo.json" ]; then
        echo "$tryton_dir/demo.json"
    else
        echo "$tryton_dir/../../erp/demo/demo.json"
    fi
}

# The venv key: requirements.txt and every file of the draftline module
# (path and content), so a changed pin or module means a new venv.
env_hash() {
    (
        cd "$tryton_dir"
        sha256sum requirements.txt
        find modules -type f ! -name '*.pyc' ! -path '*/__pycache__/*' \
            | LC_ALL=C sort | xargs sha256sum
    ) | sha256sum | cut -c1-16
}

# The template key: the venv key plus what builds the database (seed.py,
# build_template below, in this file, and the demo story, by content only
# wherever it lies).
template_hash() {
    local story
    story=$(demo_file)
    (
        cd "$tryton_dir"
        env_hash
        sha256sum seed.py common.sh
        sha256sum <"$story"
    ) | sha256sum | cut -c1-16
}

# The web client key: what npm installs (sao/package.json and its lock).
sao_hash() {
    (
        cd "$tryton_dir"
        sha256sum sao/package.json sao/package-lock.json
    ) | sha256sum | cut -c1-16
}

# Installs Tryton's web client (sao) into <dir> from the npm registry:
# exactly the packages of sao/package-lock.json (versions and integrity
# hashes), nested, so that sao finds its libraries in its own
# node_modules/ (it loads them from there). npm's cache for this is a
# folder of <dir>'s, removed afterwards: nothing is written elsewhere.
install_sao() {
    local dir=$1 npm=${DRAFTLINE_NPM:-npm}
    cp "$tryton_dir/sao/package.json" "$tryton_dir/sao/package-lock.json" "$dir/"
    (
        cd "$dir"
        npm_config_cache=$dir/.npm-cache "$npm" ci --omit=dev \
            --legacy-peer-deps --no-audit --no-fund --loglevel=error
    ) >"$dir/npm.log" 2>&1 || { cat "$dir/npm.log" >&2; return 1; }
    rm -rf "$dir/.npm-cache"
    local root=$dir/node_modules/tryton-sao
    if [ ! -e "$root/index.html" ] || [ ! -e "$root/dist/tryton-sao.js" ] \
        || [ ! -e "$root/node_modules/jquery/dist/jquery.js" ]; then
        echo "tryton: npm installed an incomplete web client in $root" >&2
        return 1
    fi
}

# Creates and seeds <build-dir>/template.sqlite (and admin-password and
# people, the demo people's passwords, there).
build_template() {
    local venv=$1 build=$2 start
    start=$(date +%s)
    write_conf "$build" "$build/trytond.conf"
    "$venv/bin/python" -c 'import secrets; print(secrets.token_urlsafe(18))' >"$build/admin-password"
    : >"$build/template.sqlite"  # trytond-admin opens, never creates, a SQLite file
    echo "tryton: creating the template database" >&2
    TRYTONPASSFILE=$build/admin-password "$venv/bin/trytond-admin" \
        -c "$build/trytond.conf" -d template --all \
        --email admin@draftline.invalid \
        -u draftline --activate-dependencies >"$build/admin.log" 2>&1 \
        || { cat "$build/admin.log" >&2; return 1; }
    echo "tryton: database created in $(( $(date +%s) - start )) s; seeding" >&2
    "$venv/bin/python" "$tryton_dir/seed.py" "$build/trytond.conf" template \
        "$build/people" "$(demo_file)" >&2
}

# Writes the trytond configuration of a data dir (database files live
# there), serving the web client in <web-root> when one is given.
write_conf() {
    local data_dir=$1 conf=$2 web_root=${3:-}
    cat >"$conf.tmp" <<CONF
# Written by draftline's tryton/setup.sh; rewritten on every run.
[database]
uri = sqlite://
path = $data_dir
# Retries of a transaction that met a busy database (SQLite allows one writer)
# or drew a draft number another request took at the same time; the default
# is 5, which 8 concurrent drafts can exhaust (503).
retry = 20

# [web] listen is not set here: serve.sh passes it as TRYTOND_WEB__LISTEN
# (a value in this file would win over the environment).
[web]
# Tryton's web client (sao), served at / (empty: none; trytond's default
# would be ~/www)
root = $web_root

CONF
    mv "$conf.tmp" "$conf"
}

# Refuses (exit 2) a database name that is not [A-Za-z0-9_-]+: it becomes
# a file name and a URL path segment.
check_database_name() {
    case "$1" in
        ''|*[!A-Za-z0-9_-]*) echo "database name must be [A-Za-z0-9_-]+: $1" >&2; exit 2 ;;
    esac
}
