#!/usr/bin/env bash
# The first start as a new machine sees it: a fresh clone of this branch's last commit, an empty
# Deno cache (DENO_DIR), `task start` with no terminal (output to a file, as a log would take it)
# until its "ready on" line. Prints seconds to ready, output lines, packages and MB installed.
# Usage, from the project root: bash bench/first-start.sh [deno arguments, default: task start]
# (for instance `bash bench/first-start.sh task -q start`).
set -u
root=$(git rev-parse --show-toplevel) || exit 2
branch=$(git -C "$root" branch --show-current)
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null && sleep 2
  rm -rf "$work"
}
trap cleanup EXIT
git clone -q --branch "$branch" "$root" "$work/repo" || exit 2
cd "$work/repo" || exit 2
# REV=<commit> times an earlier state of the branch (a before/after pair in one run).
[ -n "${REV:-}" ] && { git checkout -q "$REV" || exit 2; }
export DENO_DIR="$work/deno-cache" PORT=0 CHAIN_PORT=0 DATA_DIR="$work/data" NO_COLOR=1
began=$(date +%s.%N)
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(task start)
setsid npx -y deno@2.9.6 "${args[@]}" >"$work/out" 2>&1 </dev/null &
pid=$!
until grep -q "ready on" "$work/out"; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/out"; echo "start exited before ready"; exit 1; }
  [ "$(echo "$(date +%s.%N) - $began > 300" | bc)" = 1 ] && { echo "not ready in 300 s"; exit 1; }
  sleep 0.2
done
ready=$(echo "$(date +%s.%N) - $began" | bc)
echo "seconds to ready: $ready"
echo "output lines before ready: $(grep -c "" "$work/out")"
echo "npm packages in node_modules: $(find node_modules/.deno -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l)"
echo "node_modules MB: $(du -sm node_modules | cut -f1)"
echo "Deno cache MB: $(du -sm "$DENO_DIR" | cut -f1)"
echo "--- output ---"
head -c 4000 "$work/out"
