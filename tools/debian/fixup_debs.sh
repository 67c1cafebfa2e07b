#!/usr/bin/env bash
# Run by CPack after it has built the packages (tools/cmake/deb_post_build.cmake):
# the two things CMake 3.25's DEB generator does not do as Debian does,
# done on the built packages (dpkg-deb -R, change, dpkg-deb -b):
#  - the shared library's package: the loader's cache is refreshed by a
#    dpkg trigger (DEBIAN/triggers: activate-noawait ldconfig), not by
#    ldconfig in postinst and postrm (lintian: lacks-ldconfig-trigger,
#    maintscript-calls-ldconfig);
#  - the -dbgsym packages: md5sums lists the files by their path in CPack's
#    staging tree, not in the package (lintian: md5sums-lists-nonexistent-file),
#    and there is no /usr/share/doc/<package>-dbgsym, which Debian makes a
#    link to the package's own (lintian: no-copyright-file, no-changelog);
#  - and so their Installed-Size, counted again.
# Usage: fixup_debs.sh PACKAGE...
set -euo pipefail
for package in "$@"; do
  name="$(dpkg-deb -f "$package" Package)"
  case "$package" in
    *-dbgsym_*.ddeb) ;;
    */libzkrecipes[0-9]*_*.deb) ;;
    *) continue ;;
  esac
  tree="$(mktemp -d "${TMPDIR:-/tmp}/zkr-fixup-XXXXXX")"
  # mktemp's 0700 would become the package's ./ entry, and dpkg -x gives
  # that mode to the directory it extracts into.
  chmod 0755 "$tree"
  dpkg-deb -R "$package" "$tree"
  case "$package" in
    *-dbgsym_*.ddeb)
      mkdir -p "$tree/usr/share/doc"
      ln -sfn "${name%-dbgsym}" "$tree/usr/share/doc/$name"  # once, however often fixed
      (cd "$tree" && find usr -type f -print0 | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
      ;;
    *)
      rm -f "$tree/DEBIAN/postinst" "$tree/DEBIAN/postrm"
      echo "activate-noawait ldconfig" > "$tree/DEBIAN/triggers"
      chmod 0644 "$tree/DEBIAN/triggers"
      ;;
  esac
  # Installed-Size as dpkg-gencontrol counts it (KiB per file rounded up, 1
  # per directory or link): CPack counted libzkrecipes.so.0.2, a link, as a
  # second copy of the library.
  size="$(cd "$tree" && find . -path ./DEBIAN -prune -o -mindepth 1 -printf '%y %s\n' \
    | awk '$1 == "f" {k += int(($2 + 1023) / 1024); next} {k += 1} END {print k}')"
  sed -i "s/^Installed-Size: .*/Installed-Size: $size/" "$tree/DEBIAN/control"
  dpkg-deb --root-owner-group -b "$tree" "$package" >/dev/null
  rm -rf "$tree"
done
