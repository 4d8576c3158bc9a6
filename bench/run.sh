#!/usr/bin/env sh
# Runs the jakri benchmark suite from the repository root: builds the jars unless they exist
# (or --build is given), then prints the table and the BENCH lines. Extra arguments go to
# io.jakri.bench.Bench (--quick, --runs N, --sizes 1000,5000, --agent-jvm "FLAGS", --keep).
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--build" ] || [ ! -f agent/target/jakri-agent.jar ] || [ ! -f bench/target/jakri-bench.jar ]; then
  [ "${1:-}" = "--build" ] && shift
  mvn -B -q package -DskipTests
fi
exec java -cp "bench/target/jakri-bench.jar:agent/target/jakri-agent.jar:bench/target/lib/*" io.jakri.bench.Bench "$@"
