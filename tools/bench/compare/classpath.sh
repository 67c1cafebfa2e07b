#!/bin/sh
# Prints the Java classpath CuratorLockBench.java needs, from the jars the
# Debian 12 packages libcurator-recipes-java and libcurator-framework-java
# (and what they depend on) install under /usr/share/java. slf4j-nop is the
# logging binding, so neither Curator nor ZooKeeper writes to stdout. The
# unversioned names are Debian's stable symlinks. ZKR_JAVA_DIR overrides the
# directory. Exits 1, naming the missing jars on stderr, if any is absent.
set -eu

dir="${ZKR_JAVA_DIR:-/usr/share/java}"
jars="curator-recipes curator-framework curator-client zookeeper zookeeper-jute guava slf4j-api slf4j-nop"

classpath=""
missing=""
for jar in $jars; do
  file="$dir/$jar.jar"
  if [ -r "$file" ]; then
    classpath="${classpath:+$classpath:}$file"
  else
    missing="$missing $file"
  fi
done

if [ -n "$missing" ]; then
  echo "classpath.sh: missing jar(s):$missing" >&2
  echo "classpath.sh: install with: apt-get install --no-install-recommends libcurator-recipes-java libcurator-framework-java" >&2
  exit 1
fi
printf '%s\n' "$classpath"
