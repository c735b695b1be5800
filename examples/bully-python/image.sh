#!/bin/sh
# Builds the image the Python example runs in on the docker backend: a
# minimal Debian bookworm with python3 (json is not in python3-minimal),
# made with debootstrap from the Debian mirror apt already uses and
# imported into the engine, so nothing is pulled from a registry. About
# 30 s and 235 MB. Needs root (debootstrap) and the docker CLI.
#
#   sudo examples/bully-python/image.sh [--if-missing] [TAG]   (default ringleader-python:bookworm)
#
# --if-missing does nothing when the image is there already (`make
# examples` uses it), and installs debootstrap with apt-get when it is
# missing and this runs as root.
#
# A scenario names it beside its program:
#   cluster: {program: [python3, examples/bully-python/bully.py], image: ringleader-python:bookworm}
set -eu
if_missing=
if [ "${1:-}" = "--if-missing" ]; then
  if_missing=1
  shift
fi
tag=${1:-ringleader-python:bookworm}
if [ -n "$if_missing" ] && docker image inspect "$tag" >/dev/null 2>&1; then
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  if [ -n "$if_missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing debootstrap (apt-get) to build $tag"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
  else
    echo "$0: debootstrap is needed to build $tag: apt-get install debootstrap (as root), then run this again" >&2
    exit 1
  fi
fi
mirror=${MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
root=$(mktemp -d /tmp/ringleader-python-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "building $tag with debootstrap from $mirror (about a minute)"
debootstrap --variant=minbase --include=python3 bookworm "$root" "$mirror" >/dev/null
tar -C "$root" -c . | docker import --change 'LABEL org.ringleader.project=ringleader' - "$tag"
echo "image $tag ready"
