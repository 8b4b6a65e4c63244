#!/usr/bin/env bash
# Installs what rxeq needs on a fresh Debian machine with Go: a C compiler
# (the native backend), SLEEF (its vectorised transcendentals; without it
# the runtime falls back to libm, slower), tcc (fast builds of fuzz
# candidates; optional), a C++ compiler and libtorch-dev (the torch
# executor: the same generated C over libtorch's ATen kernels), xmllint
# (JUnit validation), and NumPy and PyTorch for Debian's /usr/bin/python3
# (the Python executor examples), python3-onnx (the ONNX checker),
# libonnx-testdata (ONNX's node tests), OpenBLAS (what libtorch
# recommends) and ONNX Runtime 1.30's CPU library (the onnxruntime
# executors), taken from the npm package onnxruntime-node without running
# its install script and checked against its sha256, and node with the
# TensorFlow.js packages that tfjs/package-lock.json pins (the tfjs-cpu and
# tfjs-wasm executors), installed with npm ci --ignore-scripts. Sourced by the other
# scripts; a no-op when all are present. apt waits up to ten minutes for a lock another
# installer holds instead of failing.
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
[ -e /usr/include/x86_64-linux-gnu/sleef.h ] || [ -e /usr/include/sleef.h ] || [ "$(uname -m)" != x86_64 ] || need+=(libsleef-dev)
command -v tcc >/dev/null 2>&1 || need+=(tcc)
command -v c++ >/dev/null 2>&1 || need+=(g++)
[ -f /usr/include/ATen/ATen.h ] && [ -e /usr/lib/x86_64-linux-gnu/libtorch_cpu.so ] || need+=(libtorch-dev)
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
/usr/bin/python3 -I -c 'import numpy' >/dev/null 2>&1 || need+=(python3-numpy)
/usr/bin/python3 -I -c 'import torch' >/dev/null 2>&1 || need+=(python3-torch)
/usr/bin/python3 -I -c 'import onnx.checker' >/dev/null 2>&1 || need+=(python3-onnx)
[ -d /usr/share/libonnx-testdata/data/node ] || need+=(libonnx-testdata)
# libtorch recommends OpenBLAS; --no-install-recommends would leave
# PyTorch (and the torch executor) on the reference BLAS.
[ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ] || [ "$(uname -m)" != x86_64 ] || need+=(libopenblas0-pthread)
# ONNX Runtime: where ort.DefaultLibrary looks (os.UserCacheDir()/rxeq/ort/VERSION).
ort_version=1.30.0
ort_sha256=ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23
ort_lib="${XDG_CACHE_HOME:-$HOME/.cache}/rxeq/ort/$ort_version/libonnxruntime.so.1"
[ -e "$ort_lib" ] || command -v npm >/dev/null 2>&1 || need+=(npm)
# TensorFlow.js: where jsexport.DefaultDir looks (os.UserCacheDir()/rxeq/tfjs/VERSION).
tfjs_version=4.22.0
tfjs_lock="$(dirname "${BASH_SOURCE[0]}")/../tfjs"
tfjs_dir="${XDG_CACHE_HOME:-$HOME/.cache}/rxeq/tfjs/$tfjs_version"
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ! -e "$ort_lib" ]; then
  echo "== fetching ONNX Runtime $ort_version (npm pack onnxruntime-node@$ort_version)"
  ort_tmp=$(mktemp -d)
  (cd "$ort_tmp" && npm pack --silent "onnxruntime-node@$ort_version" --pack-destination . >/dev/null &&
    tar -xzf "onnxruntime-node-$ort_version.tgz" package/bin/napi-v6/linux/x64/libonnxruntime.so.1)
  got=$(sha256sum "$ort_tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" | cut -d' ' -f1)
  if [ "$got" != "$ort_sha256" ]; then
    echo "libonnxruntime.so.1 of onnxruntime-node@$ort_version has sha256 $got, want $ort_sha256"; rm -rf "$ort_tmp"; exit 1
  fi
  mkdir -p "$(dirname "$ort_lib")"
  mv "$ort_tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$ort_lib.tmp.$$" && mv "$ort_lib.tmp.$$" "$ort_lib"
  rm -rf "$ort_tmp"
fi
# The packages are installed when the directory's lock file is not the
# repository's (a fresh machine, or a new pin), into a temporary directory
# renamed into place, so that a half-done install is never used.
if ! cmp -s "$tfjs_lock/package-lock.json" "$tfjs_dir/package-lock.json" ||
  [ ! -e "$tfjs_dir/node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm" ]; then
  echo "== installing TensorFlow.js $tfjs_version (npm ci --ignore-scripts in $tfjs_dir)"
  tfjs_tmp="$tfjs_dir.tmp.$$"
  rm -rf "$tfjs_tmp" && mkdir -p "$tfjs_tmp"
  cp "$tfjs_lock/package.json" "$tfjs_lock/package-lock.json" "$tfjs_tmp/"
  (cd "$tfjs_tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  rm -rf "$tfjs_dir" && mv "$tfjs_tmp" "$tfjs_dir"
fi
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
