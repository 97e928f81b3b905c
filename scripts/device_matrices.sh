#!/usr/bin/env bash
# The real matrices for a device call, packed small enough to travel.
#
#   bash scripts/device_matrices.sh pack     # here: ../shared/matrices -> shared-matrices.tar.xz
#   source scripts/device_matrices.sh unpack # on the device: -> shared-matrices/, SPLA_SHARED_MATRICES
#
# The device tool copies at most 64 MiB: the tracked tree (42 MiB when this was written, 17 MiB
# since the lab's large records are gzipped) plus what a call carries. The 53 .mtx.gz files take
# 19 MiB; as plain .mtx in one xz stream they take 12.5 MiB: carry ["shared-matrices.tar.xz",
# ".whl"] (both ignored by git).
# unpack starts from an empty folder every call: a warm machine keeps ignored folders between calls,
# and session 36 found its shared-matrices/ holding only the .spla.npz caches of an earlier call, so
# `--real shared-matrices` silently benchmarked nothing. (Sourced by gpu_check.sh, so no `set`.)
case ${1:-} in
  pack)
    src=${2:-../shared/matrices}
    tmp=$(mktemp -d)
    mkdir "$tmp/matrices"
    for f in "$src"/*.mtx.gz; do gunzip -c "$f" >"$tmp/matrices/$(basename "${f%.gz}")"; done
    cp "$src"/README* "$tmp/matrices/" 2>/dev/null
    tar -C "$tmp" -cf - matrices | xz -9 -T0 >shared-matrices.tar.xz
    rm -rf "$tmp"
    ls -l shared-matrices.tar.xz ;;
  unpack)
    # once a call: next_call.sh's tests step runs gpu_check.sh, which sources this again (the
    # export below is inherited; a new call starts without it)
    if [ -f shared-matrices.tar.xz ] && [ "${SPLA_SHARED_MATRICES:-}" != "$PWD/shared-matrices" ]; then
      rm -rf shared-matrices && mkdir shared-matrices \
        && tar -xJf shared-matrices.tar.xz --strip-components=1 -C shared-matrices \
        && find shared-matrices -name '*.mtx' -print0 | xargs -0 -P 16 -n 4 gzip -1
    fi
    # tests/conftest.py looks beside the checkout (../shared/matrices) unless told
    [ -d shared-matrices ] && export SPLA_SHARED_MATRICES=$PWD/shared-matrices ;;
  *) echo "usage: $0 pack [SOURCE] | unpack" >&2; return 2 2>/dev/null || exit 2 ;;
esac
