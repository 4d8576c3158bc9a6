#!/usr/bin/env sh
# Runs the jakri benchmark suite from the repository root: builds the jars unless they exist
# (or --build is given), then prints the table and the BENCH lines. Extra arguments go to
# io.jakri.bench.Bench (--quick, --runs N, --sizes 1000,5000, --agent-jvm "FLAGS", --keep,
# --only idle,cluster,writes,fair,zeroconf,mqtt,coap,modbus,udev,opcua,opcua-silent,controller,footprint,
# scale,floor,shutdown,slowkubelet).
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--build" ] || [ ! -f agent/target/jakri-agent.jar ] || [ ! -f bench/target/jakri-bench.jar ] || [ ! -d bench/target/lib ]; then
  [ "${1:-}" = "--build" ] && shift
  mvn -B -q package -DskipTests
fi
# N Instances need about 2N + 150 open files in the agent (its listening socket and its end of the
# kubelet's connection per Instance). Raise the limit where allowed: root with CAP_SYS_RESOURCE may
# raise the hard limit too; else the soft limit up to the hard one. The bench measures the largest
# N that fits and says so.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# This JVM stands in for the kubelet (and the API clients whose floors are measured): C1 only, so
# its JIT compiler threads do not take the two cores from the agent (a kubelet is not JIT-compiled).
exec java -XX:TieredStopAtLevel=1 -cp "bench/target/jakri-bench.jar:agent/target/jakri-agent.jar:bench/target/lib/*" io.jakri.bench.Bench "$@"
