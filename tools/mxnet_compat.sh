#!/usr/bin/env bash
# MXNet 1.9.1's own unit tests against nnvmpy; see tools/mxnet_compat.py for the options.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" tools/mxnet_compat.py "$@"
