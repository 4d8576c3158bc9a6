#!/usr/bin/env bash
# Builds the root filesystem of the jakri JRE base image for one architecture (amd64 or arm64)
# from Debian's packages of that architecture, so both architectures get the same JRE and glibc
# whatever the build machine has installed:
#   1. `apt-get download` the given packages (openjdk-17-jdk-headless for its jmods, libc6, ...)
#      of <arch> into <deb cache> (kept between builds) and `dpkg-deb -x` them into <out>.sysroot,
#   2. jlink a JRE (the given modules) from those jmods into <out>/opt/java with the build JDK's
#      jlink (jlink links jmods of another platform as long as both are Java 17),
#   3. copy the shared libraries its binaries, libraries and the <arch> natives packed in the given
#      application jars (META-INF/native, e.g. netty's epoll transport) need, by their ELF NEEDED
#      entries, from the sysroot to <out>/lib/<triplet>, and the dynamic loader to its path,
#   4. write the JRE's class-data sharing archive (lib/server/classes.jsa) with the JRE itself,
#      under qemu-<cpu>-static for a foreign <arch> (a jlink'ed JRE has none, and without it every
#      JVM in the image parses and verifies the JDK's classes again at each start),
#   5. add /etc/passwd, /etc/group (root and nonroot 65532) and /tmp.
# A foreign <arch> is added to dpkg (`dpkg --add-architecture`, `apt-get update`) when run as root.
# Usage: build-jre-rootfs.sh <arch> <java.home> <out dir> <comma-separated modules>
#        <static files dir> <deb cache dir> <space-separated packages> [application jar...]
set -euo pipefail
arch=$1 java_home=$2 out=$3 modules=$4 static=$5 cache=$6 packages=$7
shift 7

fail() {
  echo "build-jre-rootfs ($arch): $*" >&2
  exit 1
}
case $arch in
  amd64) triplet=x86_64-linux-gnu machine='X86-64' cpu=x86_64 ;;
  arm64) triplet=aarch64-linux-gnu machine='AArch64' cpu=aarch64 ;;
  *) fail "unknown architecture" ;;
esac
for tool in apt-get dpkg dpkg-deb readelf; do
  command -v $tool >/dev/null || fail "needs $tool (a Debian build host with binutils)"
done
# The JRE of a foreign <arch> runs once (step 4) under Debian's qemu-user-static.
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
  run_target=()
else
  command -v "qemu-$cpu-static" >/dev/null \
    || fail "needs qemu-$cpu-static to write the $arch JRE's class-data archive: apt-get install qemu-user-static"
  run_target=("qemu-$cpu-static" -L "$out")
fi

# 1. Debian's packages of <arch>, downloaded once per version into the cache.
# (apt-get download lists no URI for a package whose file is in the current directory: ask from an
# empty one.)
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
uris() { (cd "$empty" && apt-get download --print-uris $(printf "%s:$arch " $packages) 2>/dev/null); }
if ! uris >/dev/null; then
  [ "$(id -u)" = 0 ] \
    || fail "Debian's $arch packages are not available: run 'dpkg --add-architecture $arch && apt-get update' as root"
  if ! dpkg --print-foreign-architectures | grep -qx "$arch" \
    && [ "$arch" != "$(dpkg --print-architecture)" ]; then
    dpkg --add-architecture "$arch"
  fi
  apt-get update -qq >/dev/null 2>&1 || fail "apt-get update failed: is Debian's archive reachable?"
  uris >/dev/null || fail "apt cannot find $packages for $arch"
fi
mkdir -p "$cache"
sysroot="$out.sysroot"
rm -rf "$out" "$sysroot" "$out.debs"
mkdir -p "$out/opt" "$out/tmp" "$out/home/nonroot" "$out/lib/$triplet" "$sysroot"
mapfile -t debs < <(uris)
for deb in "${debs[@]}"; do
  read -r _ file _ sum <<<"$deb"
  if ! echo "${sum#SHA256:}  $cache/$file" | sha256sum -c --status 2>/dev/null; then
    # Into a directory of its own, then renamed: builds sharing the cache never see half a file.
    package=${file%%_*} version=${file#*_}
    version=${version%_*}
    download=$(mktemp -d "$cache/.download.XXXXXX")
    (cd "$download" && apt-get download -q "$package:$arch=${version//%3a/:}" </dev/null >/dev/null 2>&1) \
      || fail "could not download $file from Debian's archive"
    echo "${sum#SHA256:}  $download/$file" | sha256sum -c --status || fail "$file: checksum mismatch"
    mv "$download/$file" "$cache/$file"
    rmdir "$download"
  fi
  dpkg-deb -x "$cache/$file" "$sysroot"
  echo "$file" >>"$out.debs"
done

# 2. The JRE, from the jmods of <arch> (checked: without java.base there jlink would silently take
# the build JDK's own).
jmods="$sysroot/usr/lib/jvm/java-17-openjdk-$arch/jmods"
[ -f "$jmods/java.base.jmod" ] || fail "no $jmods/java.base.jmod in the packages"
"$java_home/bin/jlink" --module-path "$jmods" \
  --add-modules "$modules" --strip-java-debug-attributes --no-man-pages --no-header-files \
  --output "$out/opt/java"
# java.desktop is there for java.beans (SnakeYAML, Jackson); the AWT/sound/font natives are not
# used headless and would pull X11, freetype and friends: drop them.
for so in libawt libawt_headless libawt_xawt libfontmanager libjavajpeg libjawt libjsound liblcms \
  libmlib_image libsplashscreen; do
  rm -f "$out/opt/java/lib/$so.so"
done

# 3. The shared libraries, by NEEDED entries, resolved inside the sysroot (symlinks too).
natives="$out.natives"
rm -rf "$natives"
mkdir -p "$natives"
for jar in "$@"; do
  (cd "$natives" && "$java_home/bin/jar" xf "$jar" META-INF/native)
done
in_sysroot() {
  local path=$1 target
  while [ -L "$sysroot$path" ]; do
    target=$(readlink "$sysroot$path")
    case $target in
      /*) path=$target ;;
      *) path=$(dirname "$path")/$target ;;
    esac
  done
  [ -f "$sysroot$path" ] && echo "$sysroot$path"
}
needed() {
  for elf in "$@"; do
    if readelf -h "$elf" 2>/dev/null | grep "Machine:.*$machine" >/dev/null; then
      readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
    fi
  done | sort -u
}
mapfile -t elves < <(find "$out/opt/java" "$natives" -type f \
  \( -name '*.so' -o -path '*/bin/*' -o -name jspawnhelper \))
names=$(needed "${elves[@]}")
while [ -n "$names" ]; do
  copied=()
  for name in $names; do
    case $name in ld-linux-*) continue ;; esac
    [ -z "$(find "$out/opt/java/lib" -name "$name")" ] || continue
    [ ! -e "$out/lib/$triplet/$name" ] || continue
    src=$(in_sysroot "/lib/$triplet/$name" || in_sysroot "/usr/lib/$triplet/$name") \
      || fail "no $name in the packages ($packages): add the package that has it"
    cp "$src" "$out/lib/$triplet/$name"
    copied+=("$out/lib/$triplet/$name")
  done
  names=$([ ${#copied[@]} -eq 0 ] || needed "${copied[@]}")
done
readelf -h "$out/opt/java/bin/java" | grep "Machine:.*$machine" >/dev/null \
  || fail "jlink did not make an $arch JRE"
loader=$(readelf -l "$out/opt/java/bin/java" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
mkdir -p "$out$(dirname "$loader")"
cp "$(in_sysroot "$loader")" "$out$loader"
rm -rf "$natives" "$sysroot"

# 4. The JDK's default class-data sharing archive, written by the JRE it is for (the archive names
# the exact JVM build; a JVM that finds none starts without class-data sharing).
dump=$("${run_target[@]}" "$out/opt/java/bin/java" -Xshare:dump 2>&1) \
  || fail "java -Xshare:dump failed: $(echo "$dump" | tail -3)"
[ -s "$out/opt/java/lib/server/classes.jsa" ] || fail "java -Xshare:dump wrote no classes.jsa"

# 5. Users and /tmp.
cp -r "$static/." "$out/"
echo "jre rootfs ($arch): $(du -sh "$out" | cut -f1), Java $(sed -n 's/JAVA_VERSION="\(.*\)"/\1/p' \
  "$out/opt/java/release"), class-data archive $(du -h "$out/opt/java/lib/server/classes.jsa" | cut -f1), $(ls "$out/lib/$triplet" | wc -l) libraries from $(tr '\n' ' ' <"$out.debs")"
rm -f "$out.debs"
