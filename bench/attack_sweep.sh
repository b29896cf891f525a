#!/usr/bin/env bash
# Sim sweep of issue 15: every attacked policy-violation task (tauguard/attacks/targets), each
# tactic, seed 300, for react / refuse-writes / ledger / action-guard. SIMULATION: the sim agent
# yields with the fault profile's attack susceptibility (a yardstick, not a real-agent finding).
# Usage: [DOMAINS="telecom airline"] bench/attack_sweep.sh OUT_DIR [K_MAIN] [K_REST]   (k for false-premise and planner; k for the rest)
set -u
OUT=${1:-runs/attack-sweep}; KMAIN=${2:-4}; KREST=${3:-4}
export LITELLM_LOCAL_MODEL_COST_MAP=True CI=true
TG=${TAUGUARD:-tauguard}
ids() { python - "$1" <<'PY'
import sys
from tauguard.attacks.catalog import set_targets
print(",".join(sorted(set_targets("policy-violation", sys.argv[1]))))
PY
}
for domain in ${DOMAINS:-telecom airline}; do
  IDS=$(ids $domain)
  for tactic in false-premise planner insist emotional authority; do
    k=$KREST; case $tactic in false-premise|planner) k=$KMAIN;; esac
    for s in react refuse-writes ledger action-guard; do
      name="$s-$domain-$tactic"
      [ -f "$OUT/$name/manifest.json" ] && grep -q '"completed"' "$OUT/$name/manifest.json" && continue
      if [ -d "$OUT/$name" ]; then $TG run --resume "$OUT/$name" --plain >/dev/null 2>&1
      else $TG run --strategy $s --domain $domain --task-ids "$IDS" -k $k --attack $tactic --seed 300 \
             --workers 2 --out "$OUT" --name "$name" --plain > /dev/null 2>&1; fi
      echo "$(date -u +%T) done $name"
    done
  done
done
