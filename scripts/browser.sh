#!/usr/bin/env bash
# Installs the browser the review-page tests drive: headless Chromium and its
# WebDriver, from the distribution's packages (`chromium`, `chromium-driver`),
# through apt. Skipped when both are already there. Needs root (or sudo) and
# the package registry; prints where the two binaries are.
set -euo pipefail

have() { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }

if ! have; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "scripts/browser.sh: apt-get is not available; install Chromium and chromedriver yourself" >&2
    exit 1
  fi
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then as_root=(sudo); else
      echo "scripts/browser.sh: installing Chromium needs root (or sudo)" >&2
      exit 1
    fi
  fi
  echo "scripts/browser.sh: installing chromium and chromium-driver with apt"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null
fi

have || { echo "scripts/browser.sh: chromium or chromedriver is still missing" >&2; exit 1; }
echo "chromium:     $(command -v chromium) ($(chromium --version 2>/dev/null | head -1))"
echo "chromedriver: $(command -v chromedriver) ($(chromedriver --version 2>/dev/null | head -1))"
