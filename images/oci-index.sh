#!/usr/bin/env bash
# Joins single-platform OCI image tarballs (Jib's buildTar output: an OCI image layout with one
# manifest) into one OCI image layout tarball whose index.json names, under <ref name>, an image
# index of all their manifests with their platforms: what `skopeo copy --all oci-archive:…` and
# `podman load` read as one multi-platform image. Jib builds multi-platform images only to
# registries, not to tarballs. The output is reproducible: sorted entries, mtime 0, owner 0.
# Usage: oci-index.sh <out.tar> <ref name> <arch>=<oci image tar>...
set -euo pipefail
out=$1 ref=$2
shift 2

fail() {
  echo "oci-index ($out): $*" >&2
  exit 1
}
# The one value of "<key>":"sha256:…" in a JSON file, or fail.
digest_of() {
  local found
  found=$(grep -oE "\"$1\":\{[^}]*\"digest\":\"sha256:[0-9a-f]{64}\"" "$2" | grep -oE '[0-9a-f]{64}')
  [ "$(echo "$found" | wc -w)" = 1 ] || fail "expected one $1 digest in $2"
  echo "$found"
}

mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$out.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/layout/blobs/sha256"
manifests=()
for input in "$@"; do
  arch=${input%%=*} tar=${input#*=}
  rm -rf "$work/in" && mkdir "$work/in"
  tar -xf "$tar" -C "$work/in"
  # index.json: {"manifests":[{…,"digest":"sha256:…",…}]}; the manifest: {…,"config":{…}}
  manifest=$(grep -oE '"digest":"sha256:[0-9a-f]{64}"' "$work/in/index.json" | grep -oE '[0-9a-f]{64}')
  [ "$(echo "$manifest" | wc -w)" = 1 ] || fail "$tar: expected one manifest in index.json"
  config=$(digest_of config "$work/in/blobs/sha256/$manifest")
  grep -q "\"architecture\":\"$arch\"" "$work/in/blobs/sha256/$config" \
    || fail "$tar: its image config is not for $arch"
  grep -q '"os":"linux"' "$work/in/blobs/sha256/$config" || fail "$tar: its image config is not for linux"
  cp -n "$work/in/blobs/sha256/"* "$work/layout/blobs/sha256/"
  size=$(stat -c %s "$work/in/blobs/sha256/$manifest")
  manifests+=("{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$manifest\",\"size\":$size,\"platform\":{\"architecture\":\"$arch\",\"os\":\"linux\"}}")
done

index=$(IFS=,; echo "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"manifests\":[${manifests[*]}]}")
printf '%s' "$index" >"$work/index"
digest=$(sha256sum "$work/index" | cut -d' ' -f1)
mv "$work/index" "$work/layout/blobs/sha256/$digest"
printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"digest\":\"sha256:$digest\",\"size\":${#index},\"annotations\":{\"org.opencontainers.image.ref.name\":\"$ref\"}}]}" \
  >"$work/layout/index.json"
printf '%s' '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"
find "$work/layout" -type d -exec chmod 755 {} + -o -type f -exec chmod 644 {} +
tar --sort=name --format=ustar --mtime=@0 --owner=0 --group=0 --numeric-owner \
  -cf "$out" -C "$work/layout" oci-layout index.json blobs
echo "$out: $ref for $(printf '%s ' "${@%%=*}")($(du -h "$out" | cut -f1))"
