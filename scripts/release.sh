#!/usr/bin/env bash
# Builds a release binary of assay: static (cgo off), without the build
# machine's paths (-trimpath), without the symbol table and DWARF debug
# information (-s -w; panics still print full stack traces), and stamped with
# VERSION when one is given (what `assay --version` prints and every run
# records; without one, the version is the git commit the toolchain stamps).
#
#   scripts/release.sh [VERSION] [OUT]      # OUT defaults to dist/assay
#   GOOS=darwin GOARCH=arm64 scripts/release.sh v1.2.3 dist/assay-darwin-arm64
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-}
out=${2:-dist/assay}
ldflags="-s -w"
if [ -n "$version" ]; then
	ldflags="$ldflags -X github.com/assay-eval/assay/internal/cli.buildVersion=$version"
fi
CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$out" ./cmd/assay
echo "$out: $("$out" --version 2>/dev/null || echo "built for $(go env GOOS)/$(go env GOARCH)"), $(wc -c <"$out" | tr -d ' ') bytes"
