#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance, client mode)
# against a client command, with Node 22 first on PATH. Needs `bash scripts/setup.sh` first.
#
#   scripts/run_conformance.sh [OPTIONS] [--] CLIENT_COMMAND [ARG...]
#
# For each scenario the suite starts a fresh test server on 127.0.0.1:<random port>, runs
#   sh -c "CLIENT_COMMAND ARG... <server-url>"       (server URL appended as the LAST argv)
# with MCP_CONFORMANCE_SCENARIO=<scenario> (and, for some auth scenarios,
# MCP_CONFORMANCE_CONTEXT=<json>) in its environment. Details: tests/conformance/README.md.
#
# Options:
#   --scenario NAME          run NAME (repeatable). Default: the 4 core scenarios
#                            initialize tools_call elicitation-sep1034-client-defaults sse-retry
#   --suite all              every client scenario (`conformance list --client`), with the
#                            baseline tests/conformance/baseline.yml applied
#   --v2                     the 0.2.0-alpha.12 suite (48 scenarios of the MCP 2026-07-28 era,
#                            npm alias conformance-2026) instead of 0.1.16, with the baseline
#                            tests/conformance/baseline-2026.yml
#   --expected-failures FILE baseline YAML (`client: [scenario, ...]`); a listed scenario that
#                            fails is XFAIL (ok), one that passes is STALE (error), as in the
#                            conformance CLI itself
#   --no-baseline            do not apply a baseline, not even with --suite all
#   -o, --output-dir DIR     results (default: artifacts/conformance); per scenario
#                            DIR/<scenario>/{conformance.log,<scenario>-<ts>/checks.json,...}
#   --timeout MS             per-scenario client timeout (default 30000)
#   -j, --jobs N             scenarios run at once (default 2); sse-retry always runs alone,
#                            after the others, since under load it reconnects late and warns
#   -v, --verbose            print the conformance output of each failing scenario
#   --list                   print the client scenarios and exit
#
# A scenario PASSes when the conformance CLI exits 0 (no FAILURE or WARNING check, client
# neither timed out nor exited non-zero) AND it recorded at least one SUCCESS check (the CLI
# alone passes a client that exits 0 without connecting to `initialize`: 0 checks, 0 failed).
# Exit: 0 all ok, 1 some FAIL or STALE, 2 usage error, 3 tools not installed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/tools_env.sh
source "$ROOT/scripts/tools_env.sh"

CORE_SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)
DEFAULT_BASELINE="$ROOT/tests/conformance/baseline.yml"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
die_usage() { echo "run_conformance.sh: $*" >&2; echo "(see --help)" >&2; exit 2; }

SCENARIOS=()
SUITE=""
BASELINE=""
NO_BASELINE=0
OUT="$ROOT/artifacts/conformance"
TIMEOUT=30000
JOBS=2
VERBOSE=0
LIST=0
V2=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --scenario) [[ $# -ge 2 ]] || die_usage "--scenario needs a name"; SCENARIOS+=("$2"); shift 2 ;;
    --scenario=*) SCENARIOS+=("${1#*=}"); shift ;;
    --suite) [[ $# -ge 2 ]] || die_usage "--suite needs a name"; SUITE="$2"; shift 2 ;;
    --suite=*) SUITE="${1#*=}"; shift ;;
    --expected-failures) [[ $# -ge 2 ]] || die_usage "--expected-failures needs a file"; BASELINE="$2"; shift 2 ;;
    --expected-failures=*) BASELINE="${1#*=}"; shift ;;
    --no-baseline) NO_BASELINE=1; shift ;;
    -o|--output-dir) [[ $# -ge 2 ]] || die_usage "$1 needs a directory"; OUT="$2"; shift 2 ;;
    --output-dir=*) OUT="${1#*=}"; shift ;;
    --timeout) [[ $# -ge 2 ]] || die_usage "--timeout needs ms"; TIMEOUT="$2"; shift 2 ;;
    --timeout=*) TIMEOUT="${1#*=}"; shift ;;
    -j|--jobs) [[ $# -ge 2 ]] || die_usage "$1 needs a number"; JOBS="$2"; shift 2 ;;
    --jobs=*) JOBS="${1#*=}"; shift ;;
    -v|--verbose) VERBOSE=1; shift ;;
    --list) LIST=1; shift ;;
    --v2) V2=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die_usage "unknown option: $1" ;;
    *) break ;;
  esac
done
CLIENT_ARGV=("$@")

[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die_usage "--timeout must be a number of ms"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die_usage "--jobs must be >= 1"

CONF="$AGENT_LS_NPM_BIN/conformance"
if [[ $V2 -eq 1 ]]; then
  CONF="$AGENT_LS_ROOT/.tools/npm/node_modules/conformance-2026/dist/index.js"
  DEFAULT_BASELINE="$ROOT/tests/conformance/baseline-2026.yml"
fi
if [[ ! -x "$CONF" || ! -x "$AGENT_LS_NODE22/node" ]]; then
  echo "run_conformance.sh: conformance suite or Node 22 not installed; run: bash scripts/setup.sh" >&2
  exit 3
fi
# The conformance bin is `#!/usr/bin/env node`: Node 22 first on PATH makes it (and any
# node-based client) run on 22. The client inherits this PATH.
export PATH="$AGENT_LS_NODE22:$PATH"
NODE="$AGENT_LS_NODE22/node"
export NO_COLOR=1 FORCE_COLOR=0

# The full client scenario list, from the CLI itself.
all_scenarios() {
  "$CONF" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p'
}

if [[ $LIST -eq 1 ]]; then "$CONF" list --client; exit 0; fi
[[ ${#CLIENT_ARGV[@]} -gt 0 ]] || die_usage "missing CLIENT_COMMAND"

if [[ -n "$SUITE" ]]; then
  [[ ${#SCENARIOS[@]} -eq 0 ]] || die_usage "use --suite or --scenario, not both"
  case "$SUITE" in
    all) mapfile -t SCENARIOS < <(all_scenarios) ;;
    *) die_usage "unknown suite '$SUITE' (supported: all)" ;;
  esac
  [[ ${#SCENARIOS[@]} -gt 0 ]] || { echo "run_conformance.sh: 'conformance list --client' gave no scenarios" >&2; exit 3; }
  [[ -n "$BASELINE" ]] || BASELINE="$DEFAULT_BASELINE"
fi
[[ ${#SCENARIOS[@]} -gt 0 ]] || SCENARIOS=("${CORE_SCENARIOS[@]}")
[[ $NO_BASELINE -eq 0 ]] || BASELINE=""

declare -A KNOWN=()
while read -r n; do KNOWN["$n"]=1; done < <(all_scenarios)
for s in "${SCENARIOS[@]}"; do
  [[ -n "${KNOWN[$s]:-}" ]] || die_usage "unknown scenario '$s' (list them with --list)"
done

# The conformance CLI splits --command on single spaces, appends the URL and spawns the
# pieces with shell:true, i.e. `/bin/sh -c "<command> <url>"`. Quote each argv word for sh.
# On --timeout it kills only that sh, which would leave the client running (holding the
# output pipes, so the CLI waits for it anyway): `exec` makes the client the killed process.
shq() { if [[ "$1" =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi; }
CLIENT_CMD=""
in_assignments=1
for w in "${CLIENT_ARGV[@]}"; do
  if [[ $in_assignments -eq 1 && "$w" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
    q="${BASH_REMATCH[1]}=$(shq "${BASH_REMATCH[2]}")"   # leading VAR=value stays an assignment
  else
    q="$(shq "$w")"
    if [[ $in_assignments -eq 1 ]]; then in_assignments=0; q="exec $q"; fi
  fi
  CLIENT_CMD+="${CLIENT_CMD:+ }$q"
done

# Baseline: parse with the same YAML library and the same shape checks as the CLI
# (`client:` / `server:` lists of scenario names); reject names that are not scenarios.
declare -A EXPECTED=()
if [[ -n "$BASELINE" ]]; then
  [[ -f "$BASELINE" ]] || die_usage "baseline not found: $BASELINE"
  BASELINE="$(cd "$(dirname "$BASELINE")" && pwd)/$(basename "$BASELINE")"
  # shellcheck disable=SC2016  # JavaScript, not shell
  if ! baseline_names="$(cd "$AGENT_LS_ROOT/.tools/npm" && "$NODE" -e '
    try {
      const fs = require("fs"); const { parse } = require("yaml");
      const d = parse(fs.readFileSync(process.argv[1], "utf8")) ?? {};
      if (typeof d !== "object" || Array.isArray(d)) throw Error("expected a mapping with client:/server: keys");
      for (const k of Object.keys(d)) if (k !== "client" && k !== "server") throw Error(`unknown key "${k}"`);
      if (d.client !== undefined && !Array.isArray(d.client)) throw Error("client: must be a list of scenario names");
      for (const n of d.client ?? []) console.log(String(n));
    } catch (e) { console.log(e.message); process.exit(1); }
  ' "$BASELINE" 2>&1)"; then
    echo "run_conformance.sh: bad baseline $BASELINE: $baseline_names" >&2
    exit 2
  fi
  while read -r n; do
    [[ -n "$n" ]] || continue
    [[ -n "${KNOWN[$n]:-}" ]] || { echo "run_conformance.sh: baseline $BASELINE lists unknown scenario '$n'" >&2; exit 2; }
    EXPECTED["$n"]=1
  done <<<"$baseline_names"
fi

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
sdir() { printf '%s/%s' "$OUT" "${1//\//__}"; }

run_one() { # run_one SCENARIO: results in $(sdir SCENARIO); never fails itself
  local s="$1" d t0 rc=0
  d="$(sdir "$s")"
  rm -rf "$d" && mkdir -p "$d"
  t0=$(date +%s%N)
  (cd "$ROOT" && "$CONF" client --command "$CLIENT_CMD" --scenario "$s" --timeout "$TIMEOUT" -o "$d") \
    >"$d/conformance.log" 2>&1 </dev/null || rc=$?
  echo "$rc" >"$d/exit_code"
  echo $((($(date +%s%N) - t0) / 1000000)) >"$d/duration_ms"
}

# Evaluate one scenario dir: prints "SUCCESS FAILURE WARNING" counts, then failing checks.
evaluate() {
  # shellcheck disable=SC2016  # JavaScript, not shell
  "$NODE" -e '
    const fs = require("fs"), path = require("path");
    const found = [];
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p); else if (e.name === "checks.json") found.push(p); } };
    walk(process.argv[1]);
    if (found.length !== 1) { console.log("0 0 0"); console.log(`(${found.length} checks.json files)`); process.exit(0); }
    const checks = JSON.parse(fs.readFileSync(found[0], "utf8"));
    const n = (s) => checks.filter((c) => c.status === s).length;
    console.log(`${n("SUCCESS")} ${n("FAILURE")} ${n("WARNING")}`);
    for (const c of checks) if (c.status === "FAILURE" || c.status === "WARNING")
      console.log(`${c.status} ${c.id}: ${c.errorMessage ?? c.details?.message ?? c.description ?? ""}`.replace(/\s+/g, " ").slice(0, 300));
  ' "$1"
}

SSE=()
OTHERS=()
for s in "${SCENARIOS[@]}"; do
  if [[ "$s" == sse-retry ]]; then SSE=("$s"); else OTHERS+=("$s"); fi
done

T0=$SECONDS
echo "conformance: ${#SCENARIOS[@]} scenario(s), $JOBS at a time (sse-retry alone), results in $OUT"
echo "conformance: client command: $CLIENT_CMD <server-url>"
for s in "${OTHERS[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n || true; done
  run_one "$s" &
done
wait
for s in "${SSE[@]}"; do run_one "$s"; done

n_pass=0; n_fail=0; n_xfail=0; n_stale=0
for s in "${SCENARIOS[@]}"; do
  d="$(sdir "$s")"
  rc="$(cat "$d/exit_code")"; ms="$(cat "$d/duration_ms")"
  mapfile -t ev < <(evaluate "$d")
  read -r ok_n fail_n warn_n <<<"${ev[0]:-}" || true
  ok_n=${ok_n:-0}; fail_n=${fail_n:-0}; warn_n=${warn_n:-0}
  why=()
  [[ $rc -eq 0 ]] || why+=("cli exit $rc")
  grep -q 'CLIENT TIMED OUT' "$d/conformance.log" && why+=("client timed out")
  grep -q 'CLIENT EXITED WITH ERROR' "$d/conformance.log" && why+=("client exited non-zero")
  [[ $fail_n -eq 0 ]] || why+=("$fail_n failed")
  [[ $warn_n -eq 0 ]] || why+=("$warn_n warnings")
  [[ $ok_n -gt 0 ]] || why+=("no SUCCESS check")
  if [[ ${#why[@]} -eq 0 ]]; then passed=1; else passed=0; fi
  if [[ -n "${EXPECTED[$s]:-}" ]]; then
    if [[ $passed -eq 1 ]]; then verdict=STALE; n_stale=$((n_stale + 1)); else verdict=XFAIL; n_xfail=$((n_xfail + 1)); fi
  else
    if [[ $passed -eq 1 ]]; then verdict=PASS; n_pass=$((n_pass + 1)); else verdict=FAIL; n_fail=$((n_fail + 1)); fi
  fi
  detail="$ok_n ok"
  if [[ ${#why[@]} -gt 0 ]]; then detail="${why[0]}"; for w in "${why[@]:1}"; do detail+=", $w"; done; fi
  printf '%-5s %-45s %6.1fs  %s\n' "$verdict" "$s" "$(awk "BEGIN{print $ms/1000}")" "$detail"
  if [[ $verdict == FAIL || $verdict == STALE ]]; then
    for line in "${ev[@]:1}"; do echo "      $line"; done
    [[ $verdict == STALE ]] && echo "      now passes: remove it from ${BASELINE#"$ROOT"/}"
    echo "      log: ${d#"$ROOT"/}/conformance.log"
    if [[ $VERBOSE -eq 1 ]]; then sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^/      | /' "$d/conformance.log"; fi
  fi
done

echo "conformance: ${n_xfail} expected failure(s) from baseline, ${n_stale} stale baseline entr$([[ $n_stale -eq 1 ]] && echo y || echo ies), $((SECONDS - T0))s"
echo "conformance: $n_pass passed, $((n_fail + n_stale)) failed"
[[ $((n_fail + n_stale)) -eq 0 ]]
