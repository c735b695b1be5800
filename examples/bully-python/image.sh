#!/bin/sh
# Builds the image the Python example runs in on the docker backend: a
# minimal Debian bookworm with python3 (json is not in python3-minimal),
# made with debootstrap from the Debian mirror apt already uses and
# imported into the engine, so nothing is pulled from a registry. About
# 30 s and 235 MB. Needs root (debootstrap) and the docker CLI.
#
#   sudo examples/bully-python/image.sh [TAG]     (default ringleader-python:bookworm)
#
# A scenario names it beside its program:
#   cluster: {program: [python3, examples/bully-python/bully.py], image: ringleader-python:bookworm}
set -eu
tag=${1:-ringleader-python:bookworm}
mirror=${MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
root=$(mktemp -d /tmp/ringleader-python-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3 bookworm "$root" "$mirror"
tar -C "$root" -c . | docker import --change 'LABEL org.ringleader.project=ringleader' - "$tag"
echo "image $tag ready"
