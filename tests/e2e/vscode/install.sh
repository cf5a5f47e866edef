#!/usr/bin/env bash
# Install code-server 4.100.3 and playwright-core into ./node_modules without
# downloading anything but npm packages.
#
# System packages needed first (Debian 12, as root):
#   apt-get update && apt-get install -y chromium libkrb5-dev ripgrep
#
# code-server's bundled @vscode/ripgrep downloads a ripgrep binary in its
# post-install step; we pre-seed its download cache with a tarball of the
# system `rg`, so it logs "Using cached download" instead.
set -euo pipefail
cd "$(dirname "$0")"

RIPGREP_PKG_VERSION="${RIPGREP_PKG_VERSION:-1.15.11}"
RIPGREP_VERSION="${RIPGREP_VERSION:-v13.0.0-10}"

rg_bin="$(command -v rg || true)"
if [ -z "$rg_bin" ]; then
  echo "install.sh: ripgrep (rg) not found; apt-get install -y ripgrep" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) rg_target=x86_64-unknown-linux-musl ;;
  aarch64 | arm64) rg_target=aarch64-unknown-linux-musl ;;
  *) echo "install.sh: unsupported arch $(uname -m)" >&2; exit 1 ;;
esac
cache_dir="${TMPDIR:-/tmp}/vscode-ripgrep-cache-${RIPGREP_PKG_VERSION}"
tarball="$cache_dir/ripgrep-${RIPGREP_VERSION}-${rg_target}.tar.gz"
if [ ! -s "$tarball" ]; then
  mkdir -p "$cache_dir"
  stage="$(mktemp -d)"
  cp "$rg_bin" "$stage/rg"
  tar -czf "$tarball" -C "$stage" rg
  rm -rf "$stage"
  echo "install.sh: seeded $tarball from $rg_bin"
fi

export npm_config_unsafe_perm=true npm_config_yes=true
if [ -f package-lock.json ]; then
  npm ci --foreground-scripts --no-audit --no-fund
else
  npm install --foreground-scripts --no-audit --no-fund
fi
test -x node_modules/.bin/code-server
echo "install.sh: code-server $(node -p "require('./node_modules/code-server/package.json').version") installed"
