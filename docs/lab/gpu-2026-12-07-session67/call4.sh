#!/usr/bin/env bash
# Session 67, call 4: the last of the session's device time (389 s) on the one run issue 17 waits on, fresh set 67,
# which h200_first.sh runs only where the card is an H200 (predictions: session 65's README, call 1's prediction 2,
# unchanged). On any other card it stops after naming it.
set -u
cd "$(dirname "$0")/../../.."
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
