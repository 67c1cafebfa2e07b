// CuratorLockBench: Apache Curator's uncontended lock cycle, for comparison
// with `zkr bench` workload 2 (uncontended acquire+release). Keep the two
// equivalent: one session, one lock object per variant reused for every
// cycle, untimed warm-up cycles, then each acquire() + release() timed on its
// own with a monotonic clock, and the process CPU time (user+sys, all JVM
// threads) over the timed cycles only. Quantiles use the same rule as
// tools/bench/stats.cc (sorted[min(n-1, floor(q*n))]).
//
// Run with the JDK's source launcher (see README.md in this directory):
//   java -cp "$(tools/bench/compare/classpath.sh)" CuratorLockBench.java \
//       <connect-string> <base-path> <cycles> <warmup-cycles>
// stdout: one JSON line per variant (write, read, exclusive), nothing else.
// Errors: a message on stderr and exit code 1.

import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

public class CuratorLockBench {
  private static final int SESSION_TIMEOUT_MS = 10_000;
  private static final int CONNECTION_TIMEOUT_MS = 15_000;  // Curator's default
  private static final int CONNECT_WAIT_S = 15;
  // An uncontended acquire never waits; the bound only turns a lock held by
  // someone else into an error instead of a hang.
  private static final long ACQUIRE_TIMEOUT_S = 30;
  private static final String[] VARIANTS = {"write", "read", "exclusive"};

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      System.err.println("CuratorLockBench: " + t);
      System.exit(1);
    }
    System.exit(0);  // do not wait for any non-daemon thread a library left
  }

  private static void run(String[] args) throws Exception {
    if (args.length != 4) {
      throw new IllegalArgumentException(
          "usage: CuratorLockBench <connect-string> <base-path> <cycles> <warmup-cycles>");
    }
    final String connect = args[0];
    final String base = args[1];
    final int cycles = parseCount(args[2], "cycles", 1);
    final int warmup = parseCount(args[3], "warmup-cycles", 0);
    if (!base.startsWith("/")) {
      throw new IllegalArgumentException("base-path must start with '/': " + base);
    }
    final String prefix = base.replaceAll("/+$", "");

    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    if (os.getProcessCpuTime() < 0) throw new IllegalStateException("process CPU time unavailable");
    final String version = curatorVersion();

    CuratorFramework client = CuratorFrameworkFactory.newClient(
        connect, SESSION_TIMEOUT_MS, CONNECTION_TIMEOUT_MS, new ExponentialBackoffRetry(100, 3));
    client.start();
    String path = null;
    try {
      if (!client.blockUntilConnected(CONNECT_WAIT_S, TimeUnit.SECONDS)) {
        throw new IllegalStateException("no connection to " + connect + " within "
            + CONNECT_WAIT_S + " s");
      }
      for (String variant : VARIANTS) {
        path = prefix + "/curator-" + variant;
        InterProcessLock lock;
        if (variant.equals("write")) {
          lock = new InterProcessReadWriteLock(client, path).writeLock();
        } else if (variant.equals("read")) {
          lock = new InterProcessReadWriteLock(client, path).readLock();
        } else {
          lock = new InterProcessMutex(client, path);
        }

        for (int i = 0; i < warmup; ++i) {
          if (!lock.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS)) throw notAcquired(path);
          lock.release();
        }

        final long[] ns = new long[cycles];
        final long cpuStart = os.getProcessCpuTime();
        for (int i = 0; i < cycles; ++i) {
          final long start = System.nanoTime();
          if (!lock.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS)) throw notAcquired(path);
          lock.release();
          ns[i] = System.nanoTime() - start;
        }
        final long cpuNs = os.getProcessCpuTime() - cpuStart;

        deleteTree(client, path);
        path = null;

        Arrays.sort(ns);
        System.out.println(String.format(Locale.ROOT,
            "{\"library\":\"curator\",\"version\":\"%s\",\"variant\":\"%s\",\"cycles\":%d,"
                + "\"p50_us\":%.1f,\"p99_us\":%.1f,\"cpu_us_per_cycle\":%.1f}",
            jsonEscape(version), variant, cycles, quantileUs(ns, 0.50), quantileUs(ns, 0.99),
            cpuNs / 1e3 / cycles));
        System.out.flush();
      }
    } finally {
      if (path != null) {
        try {
          deleteTree(client, path);  // best effort after an error
        } catch (Exception ignored) {
          // the error being reported matters more
        }
      }
      client.close();
    }
  }

  private static int parseCount(String text, String name, int min) {
    final int value;
    try {
      value = Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer: " + text);
    }
    if (value < min) throw new IllegalArgumentException(name + " must be >= " + min);
    return value;
  }

  private static IllegalStateException notAcquired(String path) {
    return new IllegalStateException("lock " + path + " not acquired within "
        + ACQUIRE_TIMEOUT_S + " s; is another client holding it?");
  }

  // The lock node's parent is a container node; the server may reap it once
  // empty, so a missing node is fine.
  private static void deleteTree(CuratorFramework client, String path) throws Exception {
    try {
      client.delete().deletingChildrenIfNeeded().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      // already gone
    }
  }

  // Same rule as zkr::bench::Samples::Quantile.
  private static double quantileUs(long[] sortedNs, double q) {
    final int index = Math.min(sortedNs.length - 1, (int) (q * sortedNs.length));
    return sortedNs[index] / 1e3;
  }

  private static String curatorVersion() {
    try (InputStream in = InterProcessMutex.class.getResourceAsStream(
             "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
      if (in != null) {
        Properties properties = new Properties();
        properties.load(in);
        String version = properties.getProperty("version");
        if (version != null && !version.isEmpty()) return version;
      }
    } catch (Exception ignored) {
      // fall through
    }
    String version = InterProcessMutex.class.getPackage().getImplementationVersion();
    return version != null ? version : "unknown";
  }

  private static String jsonEscape(String s) {
    StringBuilder out = new StringBuilder();
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
