#!/usr/bin/env bash
# Prints the agent's package dependency graph (io.jakri.agent.* → io.jakri.agent.*, from the
# compiled classes, with the JDK's jdeps) and every package cycle in it.
# Usage: tools/package-graph.sh [classes-dir...]   (default: the agent core's and the agent binary's
#        classes, agent/core/target/classes and agent/target/classes; build them first with
#        mvn -q -pl agent -am compile)
set -euo pipefail
here="$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  set -- "$here/agent/core/target/classes" "$here/agent/target/classes"
fi
jdeps -verbose:package -filter:none -e 'io\.jakri\.agent(\..*)?' "$@" \
  | awk '$1 ~ /^io\.jakri\.agent/ && $2 == "->" && $3 ~ /^io\.jakri\.agent/ && $1 != $3 {print $1, $3}' \
  | sort -u \
  | python3 -c '
import sys
edges = [l.split() for l in sys.stdin if l.strip()]
graph = {}
for a, b in edges:
    graph.setdefault(a, set()).add(b)
    graph.setdefault(b, set())
short = lambda p: p.replace("io.jakri.agent", "agent")
for a in sorted(graph):
    if graph[a]:
        print(short(a), "->", ", ".join(short(b) for b in sorted(graph[a])))
# Tarjan: strongly connected components with more than one package are cycles.
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in index: visit(v)
print()
print("packages:", len(graph), " edges:", len(edges), " cycles:", len(sccs))
for c in sccs:
    print("cycle:", " <-> ".join(short(p) for p in c))
'
