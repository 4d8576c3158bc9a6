#!/usr/bin/env bash
# Builds the root filesystem of the jakri JRE base image without network access:
#   1. jlink a JRE (the given modules) from the build JDK into <out>/opt/java,
#   2. copy the shared libraries (and the dynamic loader) ldd reports for its binaries and
#      libraries, from this machine's glibc, to the same paths under <out>,
#      The native libraries packed in the given application jars (META-INF/native, e.g. netty's
#      epoll transport, which needs libdl) are scanned too.
#   3. add /etc/passwd, /etc/group (root and nonroot 65532) and /tmp.
# Usage: build-jre-rootfs.sh <java.home> <out dir> <comma-separated modules> <static files dir>
#        [application jar...]
set -euo pipefail
java_home=$1 out=$2 modules=$3 static=$4
shift 4

rm -rf "$out"
mkdir -p "$out/opt" "$out/tmp" "$out/home/nonroot"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --output "$out/opt/java"

# java.desktop is there for java.beans (SnakeYAML, Jackson); the AWT/sound/font natives are not
# used headless and would pull X11, freetype and friends: drop them.
for so in libawt libawt_headless libawt_xawt libfontmanager libjavajpeg libjsound liblcms \
  libmlib_image libsplashscreen; do
  rm -f "$out/opt/java/lib/$so.so"
done

# A cacerts symlink (Debian) would dangle in the image: make it a file.
cacerts="$out/opt/java/lib/security/cacerts"
if [ -L "$cacerts" ]; then cp --remove-destination -L "$cacerts" "$cacerts"; fi

natives="$out.natives"
rm -rf "$natives"
mkdir -p "$natives"
for jar in "$@"; do
  (cd "$natives" && "$java_home/bin/jar" xf "$jar" META-INF/native)
done
libs=$(find "$out/opt/java" "$natives" -type f \( -name '*.so' -o -path '*/bin/*' -o -name jspawnhelper \) \
  -exec ldd {} \; 2>/dev/null \
  | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u)
for lib in $libs; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
rm -rf "$natives"
cp -r "$static/." "$out/"
echo "jre rootfs: $(du -sh "$out" | cut -f1) with $(echo "$libs" | wc -w) system libraries"
