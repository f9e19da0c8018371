#!/usr/bin/env bash
# Installs aiosmtpd (a real SMTP server, from PyPI) into a virtualenv under the
# cache dir, once per pinned version, and prints its Python interpreter. The
# tests run it as a mail sink: `python -m aiosmtpd -n -l 127.0.0.1:PORT -c
# aiosmtpd.handlers.Mailbox DIR` keeps every message it is sent in a Maildir.
#
# Environment:
#   DRAFTLINE_CACHE   cache root (default: $XDG_CACHE_HOME/draftline or ~/.cache/draftline)
#   PYTHON            the interpreter to build the venv with (default: python3)
set -euo pipefail

AIOSMTPD_VERSION="1.4.6"

cache="${DRAFTLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draftline}"
venv="$cache/aiosmtpd-venv-$AIOSMTPD_VERSION"
python="${PYTHON:-python3}"

if [[ ! -e "$venv/.complete" ]]; then
    echo "smtp.sh: installing aiosmtpd $AIOSMTPD_VERSION into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$cache"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION" >&2
    touch "$venv/.complete"
fi
echo "$venv/bin/python"
