#!/usr/bin/env bash
# Installs what rxeq needs on a fresh Debian machine with Go: a C compiler
# (the native backend) and xmllint (JUnit validation). Sourced by the other
# scripts; a no-op when both are present.
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
