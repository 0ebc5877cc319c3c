#!/bin/sh
# What the tests need beyond Python packages: Debian's Chromium, for the web view's browser tests
# (Playwright drives it; Playwright's own browser download cannot work offline). Installed with
# apt-get when it is missing, as root or through sudo; elsewhere the browser tests skip, saying so.
set -e
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-setup: no apt-get here; install Chromium to run the browser tests (they skip without it)" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "test-setup: not root and no sudo; install Chromium (apt-get install chromium) for the browser tests" >&2
  exit 0
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
