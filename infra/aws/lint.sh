#!/usr/bin/env bash
# Lints the CloudFormation template with cfn-lint.
#
# cfn-lint is installed from PyPI into a virtualenv under the cache dir, once
# per pinned version (idempotent: a second run reuses it). Exits non-zero when
# cfn-lint reports an error or a warning, or when it cannot be installed.
#
#   infra/aws/lint.sh                 # lint infra/aws/template.json
#   infra/aws/lint.sh other.json      # lint other templates
#
# Environment:
#   DRAFTLINE_CACHE   cache root (default: $XDG_CACHE_HOME/draftline or ~/.cache/draftline)
#   PYTHON            the interpreter to build the venv with (default: python3)
set -euo pipefail

CFN_LINT_VERSION="1.58.0"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${DRAFTLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draftline}"
venv="$cache/cfn-lint-venv-$CFN_LINT_VERSION"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/cfn-lint" ]] ||
    [[ "$("$venv/bin/cfn-lint" --version 2>/dev/null)" != "cfn-lint $CFN_LINT_VERSION" ]]; then
    echo "lint.sh: installing cfn-lint $CFN_LINT_VERSION into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$cache"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "cfn-lint==$CFN_LINT_VERSION"
fi

if [[ $# -eq 0 ]]; then
    set -- "$here/template.json"
fi

"$venv/bin/cfn-lint" --version
# Non-zero exit on any error (E) or warning (W); informational findings (I)
# are printed but do not fail the run.
"$venv/bin/cfn-lint" --include-checks I --non-zero-exit-code warning -- "$@"
echo "lint.sh: cfn-lint found no errors or warnings in: $*"
