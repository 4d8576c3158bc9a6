#!/usr/bin/env bash
# Writes the AppCDS archives of the application jars for one architecture: static class-data
# sharing archives of the JDK's and a jar's classes named in a class list (made by
# io.jakri.bench.CdsTraining from a typical start), dumped by that architecture's JRE (under
# Debian's qemu-user-static for a foreign one). An archive records its jar's path, size and mtime,
# so each jar is dumped exactly as the image holds it: /opt/jakri/<jar name>, mtime 1 s after the
# epoch (Jib's file time). /opt/jakri exists only inside a private mount namespace (unshare, a
# tmpfs over /opt): nothing outside the build directory is written. The image's entrypoint maps
# the archive with -XX:SharedArchiveFile; a JVM that cannot use it (another JVM build, a changed
# jar) starts without it.
# Usage: dump-app-cds.sh <arch> <jre rootfs> <out dir> <jar>=<class list>...
# Writes <out dir>/<jar name without .jar>.jsa for each jar.
set -euo pipefail
arch=$1 rootfs=$2 out=$3
shift 3

fail() {
  echo "dump-app-cds ($arch): $*" >&2
  exit 1
}
case $arch in
  amd64) cpu=x86_64 ;;
  arm64) cpu=aarch64 ;;
  *) fail "unknown architecture" ;;
esac
[ -x "$rootfs/opt/java/bin/java" ] || fail "no JRE in $rootfs"
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
  run=()
else
  command -v "qemu-$cpu-static" >/dev/null || fail "needs qemu-$cpu-static: apt-get install qemu-user-static"
  run=("qemu-$cpu-static" -L "$rootfs")
fi
unshare --mount --map-root-user true 2>/dev/null \
  || fail "needs a private mount namespace (unshare --mount --map-root-user): run as root or allow user namespaces"
mkdir -p "$out"
out=$(cd "$out" && pwd)
for pair in "$@"; do
  jar=$(realpath "${pair%%=*}") classlist=$(realpath "${pair#*=}")
  name=$(basename "$jar" .jar)
  [ -s "$classlist" ] || fail "no class list $classlist"
  rm -f "$out/$name.jsa"
  # shellcheck disable=SC2016
  log=$(unshare --mount --map-root-user bash -euc '
      jar=$1 name=$2 classlist=$3 archive=$4
      shift 4
      mount -t tmpfs -o size=256m jakri-cds /opt
      mkdir /opt/jakri
      cp "$jar" "/opt/jakri/$name.jar"
      touch -d @1 "/opt/jakri/$name.jar"
      "$@" -XX:-UsePerfData -Xshare:dump -XX:SharedClassListFile="$classlist" \
        -XX:SharedArchiveFile="$archive" -cp "/opt/jakri/$name.jar"
      # The archive must map with the jar as the entrypoint names it.
      "$@" -XX:-UsePerfData -Xshare:on -XX:SharedArchiveFile="$archive" \
        -cp "/opt/jakri/$name.jar" -version
    ' dump "$jar" "$name" "$classlist" "$out/$name.jsa" "${run[@]}" "$rootfs/opt/java/bin/java" 2>&1) \
    || fail "$name: java -Xshare:dump failed or its archive does not map: $(echo "$log" | tail -3)"
  [ -s "$out/$name.jsa" ] || fail "$name: no archive written"
  echo "app class-data archive ($arch): $out/$name.jsa $(du -h "$out/$name.jsa" | cut -f1)," \
    "$(grep -c -v '^[#@]' "$classlist") classes listed," \
    "$(echo "$log" | grep -c 'Preload Warning: Cannot find') not in the jar or the JDK"
done
