"""The bad-input battery of issue 11 (table: docs/bad_inputs.md).

Every case runs in-process through the console entry point (`tauguard.cli.main.main`, the
same code path as the `tauguard` command) and must give exactly one `error:` line on stderr,
exit code 2, no traceback, and write nothing.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sys
import zlib
from pathlib import Path

import pytest

from tauguard.domains import DOMAINS
from tauguard.testing.synthetic_runs import TaskSpec, write_run

# The list the unknown-domain errors name: the domain folders (tests/test_domain_list.py pins the shipped ones).
ALLOWED = ", ".join(DOMAINS)

GOOD_PROBE = (
    '{"domain": "airline", "task_id": "0", "call": {"name": "cancel_reservation", '
    '"arguments": {"reservation_id": "X"}}, "label": "refuse"}'
)
BAD_TOOL_PROBE = GOOD_PROBE.replace("cancel_reservation", "launch_rocket")

# (id, arguments with {t} = the scratch folder, fragment of the error line)
CASES: list[tuple[str, list[str], str]] = [
    # run: flags and config values
    ("run-unknown-strategy", ["run", "--strategy", "nope"], "unknown strategy 'nope'"),
    ("run-unknown-domain", ["run", "--domain", "bank"], f"unknown domain 'bank'; allowed: {ALLOWED}"),
    ("run-empty-domain", ["run", "--domain", ""], "at least one domain is required"),
    ("run-domain-twice", ["run", "--domain", "airline,airline"], "a domain is listed twice"),
    ("run-k-zero", ["run", "-k", "0"], "-k/--trials must be at least 1"),
    ("run-k-not-int", ["run", "-k", "abc"], "Invalid value for '-k' / '--trials'"),
    ("run-workers-zero", ["run", "--workers", "0"], "invalid value for 'workers' (0)"),
    ("run-max-steps-zero", ["run", "--max-steps", "0"], "invalid value for 'max_steps' (0)"),
    ("run-num-tasks-zero", ["run", "--num-tasks", "0"], "invalid value for 'num_tasks' (0)"),
    ("run-seed-not-int", ["run", "--seed", "x"], "Invalid value for '--seed'"),
    ("run-bad-format", ["run", "--format", "xml"], "unknown --format 'xml'; allowed: table, json, markdown"),
    ("run-unknown-flag", ["run", "--stratgy", "react"], "No such option: --stratgy"),
    ("run-config-missing", ["run", "--config", "{t}/missing.toml"], "config file not found"),
    ("run-config-not-toml", ["run", "--config", "{t}/bad.toml"], "bad.toml: invalid TOML"),
    ("run-config-not-utf8", ["run", "--config", "{t}/latin1.toml"], "latin1.toml: invalid TOML"),
    ("run-config-unknown-key", ["run", "--config", "{t}/typo.toml"], "unknown config key 'stratgy'"),
    ("run-config-unknown-role", ["run", "--config", "{t}/agnet.toml"], "unknown role 'agnet'; allowed: agent, user, guard"),
    ("run-config-api-key", ["run", "--config", "{t}/apikey.toml"], "API keys come only from the environment"),
    ("run-llm-args-not-json", ["run", "--llm-args", "{bad"], "--llm-args is not valid JSON"),
    ("run-llm-args-not-object", ["run", "--llm-args", "[1]"], "--llm-args must be a JSON object, got list"),
    ("run-llm-args-api-key", ["run", "--llm-args", '{"agent": {"api_key": "sk-1"}}'], "API keys come only from the environment"),
    ("run-llm-args-header", ["run", "--llm-args", '{"user": {"extra_headers": {"Authorization": "Bearer x"}}}'], "sets 'extra_headers.Authorization'"),
    ("run-llm-args-role", ["run", "--llm-args", '{"agnet": {}}'], "unknown role 'agnet'"),
    ("run-llm-args-not-table", ["run", "--llm-args", '{"agent": 5}'], "llm_args['agent'] must be a table/object"),
    ("run-name-dotdot", ["run", "--name", "../../x"], "a run name is one folder name"),
    ("run-name-slash", ["run", "--name", "a/b"], "a run name is one folder name"),
    ("run-name-hidden", ["run", "--name", ".hidden"], "a run name is one folder name"),
    ("run-name-300", ["run", "--name", "n" * 300], "at most 128 characters, got 300"),
    ("run-out-is-file", ["run", "--out", "{t}/afile"], "is a file, not a folder"),
    ("run-out-under-file", ["run", "--out", "{t}/afile/sub"], "is a file, not a folder"),
    ("run-name-exists", ["run", "--out", "{t}", "--name", "good"], "already exists; pick another --name"),
    ("run-option-syntax", ["run", "--strategy-option", "novalue"], "--strategy-option expects KEY=VALUE"),
    ("run-address-no-cluster", ["run", "--address", "tcp://head:8786"], "--address names a Ray or Dask cluster"),
    ("run-address-credentials", ["run", "--backend", "dask", "--address", "tcp://me:pw@head:8786"], "must not contain credentials"),
    ("run-backend", ["run", "--backend", "spark"], "unknown --backend 'spark'; allowed:"),
    ("run-faults-unknown", ["run", "--faults", "nosuch"], "unknown fault profile 'nosuch'"),
    ("run-faults-missing", ["run", "--faults", "{t}/missing.toml"], "fault profile file not found"),
    ("run-faults-rate-7", ["run", "--faults", "{t}/rate7.toml"], "must be within [0, 1], got 7.0"),
    ("run-option-value", ["run", "--strategy", "action-guard", "--strategy-option", "backend=bogus"], "invalid value 'bogus' for option 'backend'"),
    ("run-option-bool", ["run", "--strategy", "ledger", "--strategy-option", "render=maybe"], "for option 'render' of strategy 'ledger'"),
    ("run-option-unknown", ["run", "--strategy", "ledger", "--strategy-option", "rendr=false"], "strategy 'ledger' has no option 'rendr'"),
    ("run-block-tool", ["run", "--strategy", "block-tool", "--strategy-option", "tool=nosuchtool"], "is not a WRITE tool of airline"),
    ("run-split", ["run", "--split", "holdout"], "unknown split 'holdout'"),
    ("run-task-id", ["run", "--task-ids", "9999"], "unknown task id(s) 9999"),
    ("run-task-ids-two-domains", ["run", "--domain", "airline,retail", "--task-ids", "1"], "--task-ids needs a single --domain"),
    ("run-agent-provider", ["run", "--agent-llm", "nosuchprovider/xyz"], "unknown provider in the agent model 'nosuchprovider/xyz'"),
    ("run-user-provider", ["run", "--user-llm", "nosuchprovider/xyz"], "unknown provider in the user model"),
    ("run-guard-provider", ["run", "--guard-llm", "nosuchprovider/xyz"], "unknown provider in the guard model"),
    ("run-no-credentials", ["run", "--agent-llm", "gpt-4.1"], "set OPENAI_API_KEY in the environment"),
    # run --resume
    ("resume-missing", ["run", "--resume", "{t}/nope"], "run directory not found"),
    ("resume-not-a-run", ["run", "--resume", "{t}/emptydir"], "not a tauguard run (no manifest.json)"),
    ("resume-corrupt", ["run", "--resume", "{t}/corrupt"], "corrupt manifest"),
    ("resume-with-flag", ["run", "--resume", "{t}/good", "--strategy", "ledger"], "drop --strategy"),
    ("resume-with-config", ["run", "--resume", "{t}/good", "--config", "{t}/typo.toml"], "drop --config"),
    ("resume-workers-zero", ["run", "--resume", "{t}/good", "--workers", "0"], "--workers must be in [1, 1024], got 0"),
    # show
    ("show-missing", ["show", "{t}/nope"], "run directory not found"),
    ("show-corrupt", ["show", "{t}/corrupt"], "corrupt manifest"),
    ("show-unreadable-records", ["show", "{t}/unreadable"], "cannot read"),
    ("show-format", ["show", "{t}/good", "--format", "xml"], "'xml' is not one of"),
    # compare
    ("compare-one-run", ["compare", "{t}/good"], "compare needs at least two runs"),
    ("compare-missing", ["compare", "{t}/good", "{t}/nope"], "run directory not found"),
    ("compare-format", ["compare", "{t}/good", "{t}/good2", "--format", "xml"], "'xml' is not one of"),
    ("compare-primary-k", ["compare", "{t}/good", "{t}/good2", "--primary-k", "0"], "--primary-k"),
    ("compare-unreadable", ["compare", "{t}/good", "{t}/unreadable"], "cannot read"),
    # check
    ("check-nothing", ["check", "{t}/good"], "nothing to check"),
    ("check-floors-not-utf8", ["check", "{t}/good", "--floors", "{t}/latin1.toml"], "invalid TOML"),
    ("check-floors-missing", ["check", "{t}/good", "--floors", "{t}/missing.toml"], "floors file not found"),
    ("check-junit-under-file", ["check", "{t}/good", "--baseline", "{t}/good2", "--junit", "{t}/afile/x.xml"], "is a file, not a folder"),
    ("check-metric-alone", ["check", "{t}/good", "--floors", "{t}/floors.toml", "--metric", "pass^1"], "--metric applies to the baseline"),
    ("check-margin", ["check", "{t}/good", "--baseline", "{t}/good2", "--margin", "-1"], "--margin"),
    # probes
    ("probes-eval-strategy", ["probes", "eval", "--strategy", "nope", "--probes", "{t}/good.jsonl"], "unknown strategy 'nope'"),
    ("probes-eval-option", ["probes", "eval", "--strategy", "action-guard", "--strategy-option", "backend=bogus", "--probes", "{t}/good.jsonl"], "'bogus'"),
    ("probes-eval-not-utf8", ["probes", "eval", "--strategy", "react", "--probes", "{t}/latin1.jsonl"], "is not UTF-8"),
    ("probes-eval-missing", ["probes", "eval", "--strategy", "react", "--probes", "{t}/missing.jsonl"], "cannot read probe file"),
    ("probes-eval-tool", ["probes", "eval", "--strategy", "react", "--probes", "{t}/badtool.jsonl"], "airline has no agent tool 'launch_rocket'"),
    ("probes-build-domain", ["probes", "build", "--domain", "bank", "-o", "{t}/p.jsonl"], "unknown domain 'bank'"),
    ("probes-build-split", ["probes", "build", "--domain", "airline", "--split", "nope", "-o", "{t}/p.jsonl"], "unknown split 'nope'"),
    ("probes-build-under-file", ["probes", "build", "--domain", "airline", "-o", "{t}/afile/p.jsonl"], "is a file, not a folder"),
    # faults, strategies, the command itself
    ("faults-domain", ["faults", "--domain", "bank"], "unknown domain 'bank'"),
    ("strategies-format", ["strategies", "--format", "xml"], "'xml' is not one of"),
    ("unknown-command", ["nosuchcommand"], "No such command 'nosuchcommand'"),
]

# The 2026 battery (issue 26): bounds, file kinds, empty values, every command's options.
# (id, arguments with {t} = the scratch folder, fragment of the error line)
MORE_CASES: list[tuple[str, list[str], str]] = [
    # run: numeric bounds (tauguard/bounds.py, docs/bounds.md)
    ("run-k-1001", ["run", "-k", "1001"], "less than or equal to 1000"),
    ("run-k-1e9-int", ["run", "-k", "1000000000"], "less than or equal to 1000"),
    ("run-k-1e9", ["run", "-k", "1e9"], "Invalid value for '-k' / '--trials'"),
    ("run-k-negative", ["run", "-k", "-3"], "-k/--trials must be at least 1"),
    ("run-k-float", ["run", "-k", "2.5"], "Invalid value for '-k' / '--trials'"),
    ("run-num-tasks-huge", ["run", "--num-tasks", "100001"], "less than or equal to 100000"),
    ("run-num-tasks-negative", ["run", "--num-tasks", "-5"], "invalid value for 'num_tasks' (-5)"),
    ("run-num-tasks-text", ["run", "--num-tasks", "all"], "Invalid value for '--num-tasks'"),
    ("run-workers-huge", ["run", "--workers", "1025"], "less than or equal to 1024"),
    ("run-workers-negative", ["run", "--workers", "-1"], "invalid value for 'workers' (-1)"),
    ("run-workers-text", ["run", "-j", "many"], "Invalid value for '--workers' / '-j'"),
    ("run-concurrency-zero", ["run", "--concurrency", "0"], "invalid value for 'concurrency' (0)"),
    ("run-concurrency-huge", ["run", "--concurrency", "4097"], "less than or equal to 4096"),
    ("run-concurrency-text", ["run", "-c", "x"], "Invalid value for '--concurrency' / '-c'"),
    ("run-max-cost-zero", ["run", "--max-cost", "0"], "invalid value for 'max_cost' (0.0)"),
    ("run-max-cost-negative", ["run", "--max-cost", "-1"], "invalid value for 'max_cost' (-1.0)"),
    ("run-max-cost-nan", ["run", "--max-cost", "nan"], "invalid value for 'max_cost' (nan)"),
    ("run-max-cost-inf", ["run", "--max-cost", "inf"], "invalid value for 'max_cost' (inf)"),
    ("run-max-cost-huge", ["run", "--max-cost", "1e9"], "less than or equal to 10000000"),
    ("run-max-cost-text", ["run", "--max-cost", "ten"], "Invalid value for '--max-cost'"),
    ("run-seed-negative", ["run", "--seed", "-1"], "invalid value for 'seed' (-1)"),
    ("run-seed-huge", ["run", "--seed", "2000001"], "less than or equal to 2000000"),
    ("run-seed-float", ["run", "--seed", "1.5"], "Invalid value for '--seed'"),
    ("run-max-steps-huge", ["run", "--max-steps", "100001"], "less than or equal to 100000"),
    ("run-max-steps-negative", ["run", "--max-steps", "-3"], "invalid value for 'max_steps' (-3)"),
    ("run-rate-nan", ["run", "--rate-limit", "gpt-4.1=nan"], "invalid --rate-limit 'gpt-4.1=nan'"),
    ("run-rate-negative", ["run", "--rate-limit", "gpt-4.1=-5"], "invalid --rate-limit 'gpt-4.1=-5'"),
    ("run-rate-zero", ["run", "--rate-limit", "gpt-4.1=0"], "invalid --rate-limit 'gpt-4.1=0'"),
    ("run-rate-inf", ["run", "--rate-limit", "gpt-4.1=inf"], "invalid --rate-limit 'gpt-4.1=inf'"),
    ("run-rate-tpm-nan", ["run", "--rate-limit", "gpt-4.1=60,nan"], "invalid --rate-limit 'gpt-4.1=60,nan'"),
    ("run-rate-three", ["run", "--rate-limit", "gpt-4.1=60,10,5"], "expected MODEL=RPM[,TPM]"),
    ("run-rate-empty", ["run", "--rate-limit", "gpt-4.1="], "expected MODEL=RPM[,TPM]"),
    ("run-rate-no-model", ["run", "--rate-limit", "=60"], "expected MODEL=RPM[,TPM]"),
    ("run-rate-no-equals", ["run", "--rate-limit", "gpt-4.1"], "expected MODEL=RPM[,TPM]"),
    ("run-rate-text", ["run", "--rate-limit", "gpt-4.1=fast"], "expected MODEL=RPM[,TPM]"),
    ("run-rate-huge", ["run", "--rate-limit", "gpt-4.1=1e13"], "numbers in [0.001, 1e+12]"),
    # run: empty or malformed values
    ("run-task-ids-empty", ["run", "--task-ids", ""], "--task-ids needs at least one task id"),
    ("run-task-ids-commas", ["run", "--task-ids", ",,"], "--task-ids needs at least one task id"),
    ("run-task-ids-blank", ["run", "--task-ids", " , "], "--task-ids needs at least one task id"),
    ("run-task-ids-one-unknown", ["run", "--task-ids", "1", "--task-ids", "9999"], "unknown task id(s) 9999"),
    ("run-task-old-spelling", ["run", "--task", "1"], "No such option: --task"),
    ("run-domain-comma", ["run", "--domain", ","], "at least one domain is required"),
    ("run-domain-one-bad", ["run", "--domain", "airline,bank"], "unknown domain 'bank'"),
    ("run-domain-case", ["run", "--domain", "Airline"], "unknown domain 'Airline'"),
    ("run-strategy-empty", ["run", "--strategy", ""], "invalid value for 'strategy'"),
    ("run-strategy-case", ["run", "--strategy", "Ledger"], "unknown strategy 'Ledger'"),
    ("run-split-empty", ["run", "--split", ""], "invalid value for 'split'"),
    ("run-agent-empty", ["run", "--agent-llm", ""], "invalid value for 'agent_llm'"),
    ("run-user-empty", ["run", "--user-llm", " "], "invalid value for 'user_llm'"),
    ("run-backend-empty", ["run", "--backend", ""], "invalid value for 'backend'"),
    ("run-faults-empty", ["run", "--faults", ""], "invalid value for 'faults'"),
    ("run-out-empty", ["run", "--out", ""], "invalid value for 'out'"),
    ("run-name-empty", ["run", "--name", ""], "a run name is one folder name"),
    ("run-name-space", ["run", "--name", "a b"], "a run name is one folder name"),
    ("run-name-dash", ["run", "--name", "-x"], "a run name is one folder name"),
    ("run-name-dot", ["run", "--name", "."], "a run name is one folder name"),
    ("run-name-dotdot-only", ["run", "--name", ".."], "a run name is one folder name"),
    ("run-name-newline", ["run", "--name", "a\nb"], "a run name is one folder name"),
    ("run-name-escape", ["run", "--name", "a\x1b[31m"], "a run name is one folder name"),
    ("run-format-empty", ["run", "--format", ""], "unknown --format ''"),
    ("run-format-case", ["run", "--format", "JSON"], "unknown --format 'JSON'"),
    ("run-attack-unknown", ["run", "--attack", "bribe"], "unknown attack tactic 'bribe'"),
    ("run-attack-set-unknown", ["run", "--attack", "insist", "--attack-set", "nope"], "unknown attack set 'nope'"),
    ("run-option-empty-key", ["run", "--strategy-option", "=x"], "--strategy-option expects KEY=VALUE"),
    ("run-option-react", ["run", "--strategy", "react", "--strategy-option", "render=false"], "has no option 'render'"),
    ("run-option-ledger-list", ["run", "--strategy", "ledger", "--strategy-option", "render=[1]"], "for option 'render' of strategy 'ledger'"),
    ("run-option-workflow-raw-variant", ["run", "--strategy", "workflow-raw", "--strategy-option", "variant=graph"], "has no option 'variant'"),
    ("run-option-workflow-self-variant", ["run", "--strategy", "workflow-self", "--strategy-option", "variant=raw"], "has no option 'variant'"),
    ("run-option-workflow-variant", ["run", "--strategy", "workflow", "--strategy-option", "variant=tree"], "for option 'variant' of strategy 'workflow'"),
    ("run-llm-args-string", ["run", "--llm-args", '"agent"'], "--llm-args must be a JSON object, got str"),
    ("run-llm-args-null", ["run", "--llm-args", "null"], "--llm-args must be a JSON object, got NoneType"),
    ("run-llm-args-number", ["run", "--llm-args", "5"], "--llm-args must be a JSON object, got int"),
    ("run-llm-args-empty", ["run", "--llm-args", ""], "--llm-args is not valid JSON"),
    ("run-llm-args-secret", ["run", "--llm-args", '{"agent": {"client_secret": "s"}}'], "API keys come only from the environment"),
    ("run-llm-args-token", ["run", "--llm-args", '{"guard": {"auth_token": "t"}}'], "API keys come only from the environment"),
    ("run-llm-args-list-role", ["run", "--llm-args", '{"user": []}'], "llm_args['user'] must be a table/object"),
    ("run-address-space", ["run", "--backend", "ray", "--address", "a b"], "a cluster address is one word"),
    ("run-address-empty", ["run", "--backend", "ray", "--address", ""], "a cluster address is one word"),
    ("run-backend-case", ["run", "--backend", "Loky"], "unknown --backend 'Loky'"),
    # run: files that are not regular files, and unusable folders
    ("run-config-fifo", ["run", "--config", "{t}/fifo"], "is a FIFO (named pipe); give a regular file"),
    ("run-config-dev-zero", ["run", "--config", "/dev/zero"], "/dev/zero: is a device; give a regular file"),
    ("run-config-dev-null", ["run", "--config", "/dev/null"], "/dev/null: is a device; give a regular file"),
    ("run-config-folder", ["run", "--config", "{t}/emptydir"], "is a folder"),
    ("run-faults-fifo", ["run", "--faults", "{t}/fifo.toml"], "is a FIFO (named pipe)"),
    ("run-faults-dev-zero", ["run", "--faults", "/dev/zero"], "fault profile /dev/zero: is a device"),
    ("run-faults-not-toml", ["run", "--faults", "{t}/bad.toml"], "invalid TOML"),
    ("run-cache-file", ["run", "--cache", "{t}/afile"], "must be a directory (it is a file)"),
    ("run-cache-under-file", ["run", "--cache", "{t}/afile/cache"], "is not a folder"),
    ("run-cache-empty", ["run", "--cache", ""], "invalid value for 'cache'"),
    ("run-cache-db-folder", ["run", "--cache", "{t}/badcache"], "cache.db is not a readable and writable file"),
    ("run-out-dev-null", ["run", "--out", "/dev/null"], "/dev/null is not a folder"),
    # run: values in a config file
    ("config-trials-zero", ["run", "--config", "{t}/c_trials0.toml"], "invalid value for 'trials' (0)"),
    ("config-trials-huge", ["run", "--config", "{t}/c_trials_huge.toml"], "less than or equal to 1000"),
    ("config-trials-text", ["run", "--config", "{t}/c_trials_text.toml"], "invalid value for 'trials' ('four')"),
    ("config-seed-negative", ["run", "--config", "{t}/c_seed.toml"], "invalid value for 'seed' (-7)"),
    ("config-workers-float", ["run", "--config", "{t}/c_workers.toml"], "invalid value for 'workers' (2.5)"),
    ("config-max-retries", ["run", "--config", "{t}/c_retries.toml"], "invalid value for 'max_retries' (1000)"),
    ("config-max-errors", ["run", "--config", "{t}/c_errors.toml"], "invalid value for 'max_errors' (0)"),
    ("config-guard-retries", ["run", "--config", "{t}/c_guard_retries.toml"], "invalid value for 'max_guard_retries' (-1)"),
    ("config-max-cost-nan", ["run", "--config", "{t}/c_cost_nan.toml"], "invalid value for 'max_cost' (nan)"),
    ("config-rate-nan", ["run", "--config", "{t}/c_rate_nan.toml"], "the rate limit of 'gpt-4.1' must be a finite number"),
    ("config-rate-negative", ["run", "--config", "{t}/c_rate_neg.toml"], "the rate limit of 'gpt-4.1' must be in"),
    ("config-rate-three", ["run", "--config", "{t}/c_rate_three.toml"], "is [RPM] or [RPM, TPM], got 3 numbers"),
    ("config-domains-empty", ["run", "--config", "{t}/c_domains.toml"], "at least one domain is required"),
    ("config-domain-string", ["run", "--config", "{t}/c_domain.toml"], "unknown domain 'bank'"),
    ("config-task-ids-empty", ["run", "--config", "{t}/c_task_ids.toml"], "at least one task id is required"),
    ("config-concurrency", ["run", "--config", "{t}/c_concurrency.toml"], "invalid value for 'concurrency' (0)"),
    ("config-num-tasks", ["run", "--config", "{t}/c_num_tasks.toml"], "invalid value for 'num_tasks' (0)"),
    ("config-cache-empty", ["run", "--config", "{t}/c_cache.toml"], "invalid value for 'cache'"),
    ("config-strategy-empty", ["run", "--config", "{t}/c_strategy.toml"], "invalid value for 'strategy'"),
    ("config-llm-args-list", ["run", "--config", "{t}/c_llm_args.toml"], "invalid value for 'llm_args'"),
    ("config-secret-header", ["run", "--config", "{t}/c_header.toml"], "API keys come only from the environment"),
    ("config-name-slash", ["run", "--config", "{t}/c_name.toml"], "a run name is one folder name"),
    ("config-attack", ["run", "--config", "{t}/c_attack.toml"], "unknown attack tactic 'bribe'"),
    ("config-empty-file", ["run", "--config", "{t}/empty.toml", "--strategy", "nope"], "unknown strategy 'nope'"),
    # run --resume
    ("resume-file", ["run", "--resume", "{t}/afile"], "{t}/afile"),
    ("resume-domain", ["run", "--resume", "{t}/good", "--domain", "retail"], "drop --domain"),
    ("resume-trials", ["run", "--resume", "{t}/good", "-k", "2"], "drop -k/--trials"),
    ("resume-seed", ["run", "--resume", "{t}/good", "--seed", "1"], "drop --seed"),
    ("resume-task-ids", ["run", "--resume", "{t}/good", "--task-ids", "1"], "drop --task-ids"),
    ("resume-name", ["run", "--resume", "{t}/good", "--name", "x"], "drop --name"),
    ("resume-faults", ["run", "--resume", "{t}/good", "--faults", "realistic"], "drop --faults"),
    ("resume-cache", ["run", "--resume", "{t}/good", "--cache", "{t}/c"], "drop --cache"),
    ("resume-workers-huge", ["run", "--resume", "{t}/good", "--workers", "5000"], "--workers must be in [1, 1024], got 5000"),
    ("resume-concurrency-zero", ["run", "--resume", "{t}/good", "--concurrency", "0"], "--concurrency must be in [1, 4096], got 0"),
    ("resume-max-cost-zero", ["run", "--resume", "{t}/good", "--max-cost", "0"], "--max-cost must be in"),
    ("resume-max-cost-nan", ["run", "--resume", "{t}/good", "--max-cost", "nan"], "--max-cost must be a finite number"),
    ("resume-backend", ["run", "--resume", "{t}/good", "--backend", "spark"], "unknown --backend 'spark'"),
    ("resume-emptydir", ["run", "--resume", "{t}/emptydir", "--workers", "1"], "not a tauguard run (no manifest.json)"),
    # show
    ("show-file", ["show", "{t}/afile"], "{t}/afile"),
    ("show-emptydir", ["show", "{t}/emptydir"], "not a tauguard run (no manifest.json)"),
    ("show-format-empty", ["show", "{t}/good", "--format", ""], "'' is not one of"),
    ("show-no-run", ["show"], "Missing argument 'run_dir'"),
    ("show-two-runs", ["show", "{t}/good", "{t}/good2"], "Got unexpected extra argument"),
    ("show-unknown-option", ["show", "{t}/good", "--wide-table"], "No such option: --wide-table"),
    # compare
    ("compare-resamples-zero", ["compare", "{t}/good", "{t}/good2", "--resamples", "0"], "Invalid value for '--resamples'"),
    ("compare-resamples-huge", ["compare", "{t}/good", "{t}/good2", "--resamples", "1000000000"], "less than or equal to 200000"),
    ("compare-resamples-float", ["compare", "{t}/good", "{t}/good2", "--resamples", "1e9"], "Invalid value for '--resamples'"),
    ("compare-confidence-low", ["compare", "{t}/good", "{t}/good2", "--confidence", "0.4"], "Invalid value for '--confidence'"),
    ("compare-confidence-one", ["compare", "{t}/good", "{t}/good2", "--confidence", "1"], "Invalid value for '--confidence'"),
    ("compare-confidence-nan", ["compare", "{t}/good", "{t}/good2", "--confidence", "nan"], "Invalid value for '--confidence'"),
    ("compare-confidence-text", ["compare", "{t}/good", "{t}/good2", "--confidence", "high"], "Invalid value for '--confidence'"),
    ("compare-seed-negative", ["compare", "{t}/good", "{t}/good2", "--seed", "-1"], "Invalid value for '--seed'"),
    ("compare-seed-huge", ["compare", "{t}/good", "{t}/good2", "--seed", "4294967296"], "Invalid value for '--seed'"),
    ("compare-primary-k-huge", ["compare", "{t}/good", "{t}/good2", "--primary-k", "1001"], "Invalid value for '--primary-k'"),
    ("compare-subset", ["compare", "{t}/good", "{t}/good2", "--subset", "hard"], "Invalid value for '--subset'"),
    ("compare-file", ["compare", "{t}/good", "{t}/afile"], "{t}/afile"),
    ("compare-emptydir", ["compare", "{t}/emptydir", "{t}/good"], "not a tauguard run (no manifest.json)"),
    ("compare-corrupt", ["compare", "{t}/good", "{t}/corrupt"], "corrupt manifest"),
    ("compare-no-runs", ["compare"], "Missing argument 'runs'"),
    # check
    ("check-margin-huge", ["check", "{t}/good", "--baseline", "{t}/good2", "--margin", "1.5"], "Invalid value for '--margin'"),
    ("check-margin-nan", ["check", "{t}/good", "--baseline", "{t}/good2", "--margin", "nan"], "Invalid value for '--margin'"),
    ("check-resamples-zero", ["check", "{t}/good", "--baseline", "{t}/good2", "--resamples", "0"], "Invalid value for '--resamples'"),
    ("check-resamples-huge", ["check", "{t}/good", "--baseline", "{t}/good2", "--resamples", "500000"], "less than or equal to 200000"),
    ("check-confidence", ["check", "{t}/good", "--baseline", "{t}/good2", "--confidence", "0.9999"], "Invalid value for '--confidence'"),
    ("check-seed", ["check", "{t}/good", "--baseline", "{t}/good2", "--seed", "-2"], "Invalid value for '--seed'"),
    ("check-min-tasks-zero", ["check", "{t}/good", "--baseline", "{t}/good2", "--min-tasks", "0"], "Invalid value for '--min-tasks'"),
    ("check-min-tasks-huge", ["check", "{t}/good", "--baseline", "{t}/good2", "--min-tasks", "100001"], "Invalid value for '--min-tasks'"),
    ("check-mode", ["check", "{t}/good", "--baseline", "{t}/good2", "--mode", "strict"], "Invalid value for '--mode'"),
    ("check-format", ["check", "{t}/good", "--baseline", "{t}/good2", "--format", "xml"], "Invalid value for '--format'"),
    ("check-floors-fifo", ["check", "{t}/good", "--floors", "{t}/fifo"], "is a FIFO (named pipe)"),
    ("check-floors-dev-zero", ["check", "{t}/good", "--floors", "/dev/zero"], "is a device"),
    ("check-floors-folder", ["check", "{t}/good", "--floors", "{t}/emptydir"], "is a folder"),
    ("check-floors-not-toml", ["check", "{t}/good", "--floors", "{t}/bad.toml"], "invalid TOML"),
    ("check-floors-metric", ["check", "{t}/good", "--floors", "{t}/badfloors.toml"], "floors {t}/badfloors.toml"),
    ("check-baseline-missing", ["check", "{t}/good", "--baseline", "{t}/nope"], "run directory not found"),
    ("check-baseline-corrupt", ["check", "{t}/good", "--baseline", "{t}/corrupt"], "corrupt manifest"),
    ("check-run-missing", ["check", "{t}/nope", "--baseline", "{t}/good"], "run directory not found"),
    ("check-metric-unknown", ["check", "{t}/good", "--baseline", "{t}/good2", "--metric", "accuracy"], "accuracy"),
    ("check-junit-folder", ["check", "{t}/good", "--baseline", "{t}/good2", "--junit", "{t}/emptydir"], "is a directory; give a file name"),
    # report
    ("report-missing", ["report", "{t}/nope", "-o", "{t}/r.html"], "run directory not found"),
    ("report-corrupt", ["report", "{t}/corrupt", "-o", "{t}/r.html"], "corrupt manifest"),
    ("report-emptydir", ["report", "{t}/emptydir", "-o", "{t}/r.html"], "not a tauguard run (no manifest.json)"),
    ("report-resamples", ["report", "{t}/good", "-o", "{t}/r.html", "--resamples", "0"], "Invalid value for '--resamples'"),
    ("report-resamples-huge", ["report", "{t}/good", "-o", "{t}/r.html", "--resamples", "300000"], "less than or equal to 200000"),
    ("report-confidence", ["report", "{t}/good", "-o", "{t}/r.html", "--confidence", "2"], "Invalid value for '--confidence'"),
    ("report-primary-k", ["report", "{t}/good", "-o", "{t}/r.html", "--primary-k", "0"], "Invalid value for '--primary-k'"),
    ("report-margin", ["report", "{t}/good", "-o", "{t}/r.html", "--margin", "-0.5"], "Invalid value for '--margin'"),
    ("report-seed", ["report", "{t}/good", "-o", "{t}/r.html", "--seed", "-1"], "Invalid value for '--seed'"),
    ("report-mode", ["report", "{t}/good", "-o", "{t}/r.html", "--mode", "loose"], "Invalid value for '--mode'"),
    ("report-floors-missing", ["report", "{t}/good", "-o", "{t}/r.html", "--floors", "{t}/missing.toml"], "floors file not found"),
    ("report-floors-fifo", ["report", "{t}/good", "-o", "{t}/r.html", "--floors", "{t}/fifo"], "is a FIFO (named pipe)"),
    ("report-output-folder", ["report", "{t}/good", "-o", "{t}/emptydir"], "{t}/emptydir"),
    ("report-output-under-file", ["report", "{t}/good", "-o", "{t}/afile/r.html"], "{t}/afile"),
    ("report-no-runs", ["report", "-o", "{t}/r.html"], "Missing argument 'runs'"),
    # import
    ("import-missing", ["import", "{t}/nope.json", "--out", "{t}/imp"], "cannot read"),
    ("import-fifo", ["import", "{t}/fifo", "--out", "{t}/imp"], "is a FIFO (named pipe); give a regular file"),
    ("import-dev-zero", ["import", "/dev/zero", "--out", "{t}/imp"], "/dev/zero: is a device"),
    ("import-dev-null", ["import", "/dev/null", "--out", "{t}/imp"], "/dev/null: is a device"),
    ("import-folder", ["import", "{t}/emptydir", "--out", "{t}/imp"], "is a folder"),
    ("import-gzip-bomb", ["import", "{t}/bomb.json.gz", "--out", "{t}/imp"], "refused as a possible gzip bomb"),
    ("import-corrupt-gzip", ["import", "{t}/corrupt.json.gz", "--out", "{t}/imp"], "corrupt gzip data"),
    ("import-truncated-gzip", ["import", "{t}/truncated.json.gz", "--out", "{t}/imp"], "corrupt gzip data"),
    ("import-not-json", ["import", "{t}/afile", "--out", "{t}/imp"], "not JSON"),
    ("import-not-utf8", ["import", "{t}/latin1.jsonl", "--out", "{t}/imp"], "not JSON"),
    ("import-no-simulations", ["import", "{t}/nosims.json", "--out", "{t}/imp"], "not a τ² results file"),
    # An empty list: nothing to infer the domain from (a bare list with simulations has it inferred from their gold).
    ("import-list-no-domain", ["import", "{t}/list.json", "--out", "{t}/imp"], "the file holds no simulation"),
    ("import-info-not-object", ["import", "{t}/badinfo.json", "--out", "{t}/imp"], "'info' is not an object"),
    ("import-domain-unknown", ["import", "{t}/list.json", "--domain", "bank", "--out", "{t}/imp"], "unknown domain 'bank'"),
    ("import-name-slash", ["import", "{t}/list.json", "--domain", "airline", "--name", "a/b", "--out", "{t}/imp"], "invalid run name"),
    ("import-name-dotdot", ["import", "{t}/list.json", "--domain", "airline", "--name", "..", "--out", "{t}/imp"], "invalid run name"),
    ("import-format", ["import", "{t}/list.json", "--format", "xml"], "Invalid value for '--format'"),
    ("import-no-file", ["import"], "Missing argument 'results'"),
    # audit
    ("audit-missing", ["audit", "{t}/nope", "-s", "ledger"], "run directory not found"),
    ("audit-strategy", ["audit", "{t}/good", "-s", "nope"], "unknown strategy 'nope'"),
    ("audit-no-strategy", ["audit", "{t}/good"], "Missing option '--strategy'"),
    ("audit-workers-zero", ["audit", "{t}/good", "-s", "ledger", "--workers", "0"], "Invalid value for '--workers'"),
    ("audit-workers-huge", ["audit", "{t}/good", "-s", "ledger", "--workers", "2000"], "Invalid value for '--workers'"),
    ("audit-task-ids-empty", ["audit", "{t}/good", "-s", "ledger", "--task-ids", ""], "--task-ids needs at least one task id"),
    ("audit-task-ids-unknown", ["audit", "{t}/good", "-s", "ledger", "--task-ids", "99"], "task ids not in run"),
    ("audit-task-old-unknown", ["audit", "{t}/good", "-s", "ledger", "--task", "99"], "task ids not in run"),
    ("audit-no-conversations", ["audit", "{t}/good", "-s", "ledger"], "holds no recorded conversation to audit"),
    ("audit-format", ["audit", "{t}/good", "-s", "ledger", "--format", "xml"], "Invalid value for '--format'"),
    ("audit-option-syntax", ["audit", "{t}/good", "-s", "ledger", "--strategy-option", "novalue"], "--strategy-option expects KEY=VALUE"),
    ("audit-corrupt", ["audit", "{t}/corrupt", "-s", "ledger"], "corrupt manifest"),
    # probes build / eval / sweep
    ("probes-build-no-output", ["probes", "build", "--domain", "airline"], "Missing option '--output'"),
    ("probes-build-output-folder", ["probes", "build", "--domain", "airline", "-o", "{t}/emptydir"], "is a directory; give a file name"),
    ("probes-build-task-ids-empty", ["probes", "build", "--domain", "airline", "--task-ids", "", "-o", "{t}/p.jsonl"], "--task-ids needs at least one task id"),
    ("probes-build-from-run-domain", ["probes", "build", "--from-run", "{t}/good", "--domain", "airline", "-o", "{t}/p.jsonl"], "--from-run takes the run's own domain"),
    ("probes-build-from-run-missing", ["probes", "build", "--from-run", "{t}/nope", "-o", "{t}/p.jsonl"], "run directory not found"),
    ("probes-build-format", ["probes", "build", "--domain", "airline", "-o", "{t}/p.jsonl", "--format", "xml"], "Invalid value for '--format'"),
    ("probes-eval-fifo", ["probes", "eval", "--strategy", "react", "--probes", "{t}/fifo"], "is a FIFO (named pipe)"),
    ("probes-eval-dev-zero", ["probes", "eval", "--strategy", "react", "--probes", "/dev/zero"], "is a device"),
    ("probes-eval-folder", ["probes", "eval", "--strategy", "react", "--probes", "{t}/emptydir"], "is a folder"),
    ("probes-eval-empty", ["probes", "eval", "--strategy", "react", "--probes", "{t}/empty.jsonl"], "empty.jsonl"),
    ("probes-eval-not-json", ["probes", "eval", "--strategy", "react", "--probes", "{t}/afile"], "invalid probe"),
    ("probes-eval-bad-label", ["probes", "eval", "--strategy", "react", "--probes", "{t}/badlabel.jsonl"], "invalid probe"),
    ("probes-eval-no-strategy", ["probes", "eval", "--probes", "{t}/good.jsonl"], "Missing option '--strategy'"),
    ("probes-eval-format", ["probes", "eval", "--strategy", "react", "--probes", "{t}/good.jsonl", "--format", "xml"], "Invalid value for '--format'"),
    ("probes-eval-option-syntax", ["probes", "eval", "--strategy", "ledger", "--strategy-option", "x", "--probes", "{t}/good.jsonl"], "--strategy-option expects KEY=VALUE"),
    ("probes-sweep-strategy", ["probes", "sweep", "--strategy", "nope"], "unknown strategy 'nope'"),
    ("probes-sweep-domain", ["probes", "sweep", "--strategy", "ledger", "--domain", "bank"], "unknown domain 'bank'"),
    ("probes-sweep-split", ["probes", "sweep", "--strategy", "ledger", "--domain", "airline", "--split", "nope"], "unknown split 'nope'"),
    ("probes-sweep-task-ids-domains", ["probes", "sweep", "--strategy", "ledger", "--task-ids", "1"], "--task-ids needs a single --domain"),
    ("probes-sweep-task-ids-empty", ["probes", "sweep", "--strategy", "ledger", "--domain", "airline", "--task-ids", ""], "--task-ids needs at least one task id"),
    ("probes-sweep-task-unknown", ["probes", "sweep", "--strategy", "ledger", "--domain", "airline", "--task-ids", "9999"], "unknown task id(s) 9999"),
    ("probes-sweep-num-tasks-zero", ["probes", "sweep", "--strategy", "ledger", "--num-tasks", "0"], "Invalid value for '--num-tasks'"),
    ("probes-sweep-num-tasks-huge", ["probes", "sweep", "--strategy", "ledger", "--num-tasks", "100001"], "Invalid value for '--num-tasks'"),
    ("probes-sweep-option", ["probes", "sweep", "--strategy", "ledger", "--strategy-option", "rendr=1"], "has no option 'rendr'"),
    ("probes-sweep-format", ["probes", "sweep", "--strategy", "ledger", "--format", "xml"], "Invalid value for '--format'"),
    ("probes-unknown-command", ["probes", "nosuch"], "No such command 'nosuch'"),
    # faults, strategies, attacks, workflow
    ("faults-domain-empty", ["faults", "--domain", ""], "unknown domain ''"),
    ("faults-format", ["faults", "--format", "xml"], "Invalid value for '--format'"),
    ("strategies-extra-argument", ["strategies", "ledger"], "Got unexpected extra argument"),
    ("attacks-domain", ["attacks", "--domain", "bank"], "unknown domain 'bank'"),
    ("attacks-set", ["attacks", "--attack-set", "nope"], "unknown attack set 'nope'"),
    ("attacks-format", ["attacks", "--format", "xml"], "Invalid value for '--format'"),
    ("attacks-run-missing", ["attacks", "{t}/nope"], "run directory not found"),
    ("workflow-domain", ["workflow", "show", "--domain", "bank"], "bank"),
    ("workflow-no-domain", ["workflow", "show"], "Missing option '--domain'"),
    ("workflow-format", ["workflow", "show", "--domain", "airline", "--format", "svg"], "Invalid value for '--format'"),
    ("workflow-unknown-command", ["workflow", "nosuch"], "No such command 'nosuch'"),
    # classifier
    ("classifier-train-missing", ["classifier", "train", "-p", "{t}/missing.jsonl", "-o", "{t}/a.joblib"], "missing.jsonl"),
    ("classifier-train-fifo", ["classifier", "train", "-p", "{t}/fifo", "-o", "{t}/a.joblib"], "is a FIFO (named pipe)"),
    ("classifier-train-resamples", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "--resamples", "0"], "Invalid value for '--resamples'"),
    ("classifier-train-resamples-huge", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "--resamples", "1000000000"], "Invalid value for '--resamples'"),
    ("classifier-train-c-zero", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "--C", "0"], "Invalid value for '--C'"),
    ("classifier-train-c-nan", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "--C", "nan"], "Invalid value for '--C'"),
    ("classifier-train-seed", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "--seed", "-1"], "Invalid value for '--seed'"),
    ("classifier-train-representation", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "-r", "nope"], "nope"),
    ("classifier-train-retriever", ["classifier", "train", "-p", "{t}/good.jsonl", "-o", "{t}/a.joblib", "--retriever", "nope"], "nope"),
    ("classifier-train-no-output", ["classifier", "train", "-p", "{t}/good.jsonl"], "Missing option '--output'"),
    ("classifier-eval-artifact", ["classifier", "eval", "-a", "{t}/missing.joblib", "-p", "{t}/good.jsonl"], "missing.joblib"),
    ("classifier-eval-resamples", ["classifier", "eval", "-a", "{t}/afile", "-p", "{t}/good.jsonl", "--resamples", "0"], "Invalid value for '--resamples'"),
    ("classifier-eval-seed", ["classifier", "eval", "-a", "{t}/afile", "-p", "{t}/good.jsonl", "--seed", "-5"], "Invalid value for '--seed'"),
    ("classifier-ablate-missing", ["classifier", "ablate", "--train", "{t}/missing.jsonl", "--test", "{t}/good.jsonl"], "missing.jsonl"),
    ("classifier-ablate-resamples", ["classifier", "ablate", "--train", "{t}/good.jsonl", "--test", "{t}/good.jsonl", "--resamples", "0"], "Invalid value for '--resamples'"),
    ("classifier-unknown-command", ["classifier", "nosuch"], "No such command 'nosuch'"),
    # the command itself
    ("root-unknown-option", ["--nosuch"], "No such option: --nosuch"),
    ("root-unknown-short", ["-x"], "No such option: -x"),
    ("root-version-value", ["--version=yes"], "--version"),
]

# Issue 38's reliability review: files inside a run folder that are not regular files or hold
# impossible numbers, FIFOs to every file option, outputs into a run folder, importer values.
# (id, arguments with {t} = the scratch folder, fragment of the error line)
RELIABILITY_CASES: list[tuple[str, list[str], str]] = [
    ("show-records-dev-zero", ["show", "{t}/zerorun"], "simulations.jsonl: is a device; a run folder holds regular files only"),
    ("compare-records-dev-zero", ["compare", "{t}/good", "{t}/zerorun"], "simulations.jsonl: is a device"),
    ("check-records-dev-zero", ["check", "{t}/zerorun", "--baseline", "{t}/good"], "simulations.jsonl: is a device"),
    ("report-records-dev-zero", ["report", "{t}/zerorun", "-o", "{t}/r.html"], "simulations.jsonl: is a device"),
    ("export-records-dev-zero", ["export", "{t}/zerorun", "-o", "{t}/e.json"], "simulations.jsonl: is a device"),
    ("power-records-dev-zero", ["power", "{t}/zerorun"], "simulations.jsonl: is a device"),
    ("audit-records-dev-zero", ["audit", "{t}/zerorun", "--strategy", "ledger"], "simulations.jsonl: is a device"),
    ("resume-records-dev-zero", ["run", "--resume", "{t}/zerorun"], "simulations.jsonl: is a device"),
    ("show-records-fifo", ["show", "{t}/fiforun"], "simulations.jsonl: is a FIFO (named pipe)"),
    ("compare-records-fifo", ["compare", "{t}/good", "{t}/fiforun"], "simulations.jsonl: is a FIFO (named pipe)"),
    ("report-records-fifo", ["report", "{t}/fiforun", "-o", "{t}/r.html"], "simulations.jsonl: is a FIFO (named pipe)"),
    ("resume-records-fifo", ["run", "--resume", "{t}/fiforun"], "simulations.jsonl: is a FIFO (named pipe)"),
    ("show-manifest-fifo", ["show", "{t}/fifomanifest"], "manifest.json: is a FIFO (named pipe)"),
    ("show-lock-fifo", ["show", "{t}/fifolock"], ".lock: is a FIFO (named pipe)"),
    ("resume-lock-fifo", ["run", "--resume", "{t}/fifolock"], ".lock: is a FIFO (named pipe)"),
    ("show-index-dev-zero", ["show", "{t}/zeroindex"], "outcomes-v1.jsonl: is a device"),
    ("resume-trials-1e12", ["run", "--resume", "{t}/hugetrials"], "trials 1000000000000 is outside [1, 1000]"),
    ("show-trials-1e12", ["show", "{t}/hugetrials"], "trials 1000000000000 is outside [1, 1000]"),
    ("report-audit-fifo", ["report", "{t}/good", "-o", "{t}/r.html", "--audit", "{t}/fifo"], "--audit {t}/fifo: is a FIFO (named pipe)"),
    ("report-labels-fifo", ["report", "{t}/good", "-o", "{t}/r.html", "--labels", "{t}/fifo"], "is a FIFO (named pipe)"),
    ("dialogue-cases-dir-fifo", ["dialogue", "eval", "--cases", "{t}/casesdir"], "a.jsonl: is a FIFO (named pipe)"),
    ("report-into-run-records", ["report", "{t}/good", "-o", "{t}/good/simulations.jsonl"], "is a run folder (it holds manifest.json)"),
    ("report-into-run-new-file", ["report", "{t}/good", "-o", "{t}/good/report.html"], "is a run folder (it holds manifest.json)"),
    ("audit-into-run", ["audit", "{t}/good", "--strategy", "ledger", "-o", "{t}/good/manifest.json"], "is a run folder"),
    ("report-link-out-of-folder", ["report", "{t}/good", "-o", "{t}/links/out.html"], "the link points outside its own folder"),
    ("config-nested-50k", ["run", "--config", "{t}/deep.toml"], "nested too deeply"),
    ("faults-fit-out-under-file", ["faults", "fit", "{t}/good", "-o", "{t}/afile/p.toml"], "is a file, not a folder"),
    ("import-out-dev-null", ["import", "{t}/r_ok.json", "--out", "/dev/null"], "--out /dev/null: /dev/null is not a folder"),
    ("import-out-file", ["import", "{t}/r_ok.json", "--out", "{t}/afile"], "is a file, not a folder"),
    ("import-content-object", ["import", "{t}/r_content.json", "--out", "{t}/imp"], "message 0 has content of type dict; allowed: text or null"),
    ("import-lone-surrogate", ["import", "{t}/r_surrogate.json", "--out", "{t}/imp"], "holds a lone surrogate"),
    ("import-reward-5", ["import", "{t}/r_reward_5.json", "--out", "{t}/imp"], "has reward 5, outside [0, 1]"),
    ("import-reward-inf", ["import", "{t}/r_reward_inf.json", "--out", "{t}/imp"], "has reward inf, outside [0, 1]"),
    ("import-reward-nan", ["import", "{t}/r_reward_nan.json", "--out", "{t}/imp"], "has reward nan, outside [0, 1]"),
    ("import-reward-negative", ["import", "{t}/r_reward_neg.json", "--out", "{t}/imp"], "has reward -1, outside [0, 1]"),
    ("import-reward-string", ["import", "{t}/r_reward_str.json", "--out", "{t}/imp"], "has a non-numeric reward '1.0'"),
    ("import-trial-bool", ["import", "{t}/r_trial_bool.json", "--out", "{t}/imp"], "has a non-integer trial True"),
    ("import-trial-huge", ["import", "{t}/r_trial_huge.json", "--out", "{t}/imp"], "outside [0, 999]"),
    ("import-trial-negative", ["import", "{t}/r_trial_neg.json", "--out", "{t}/imp"], "has trial -1, outside [0, 999]"),
    ("dialogue-llm-unknown-provider", ["dialogue", "eval", "--backend", "llm", "--guard-llm", "nosuchprov/x"], "unknown provider in the guard model 'nosuchprov/x'"),
    ("run-llm-args-header-object", ["run", "--llm-args", '{"agent": {"extra_headers": {"X-Key": {"v": "s3cret-h"}}}}'], "extra_headers['X-Key'] must be text, got dict (its value is not shown)"),
    ("run-llm-args-header-newline", ["run", "--llm-args", '{"agent": {"extra_headers": {"X-Key": "s3cret\\nX-Evil: 1"}}}'], "extra_headers['X-Key'] must be one line"),
    ("run-llm-args-headers-text", ["run", "--llm-args", '{"agent": {"extra_headers": "s3cret-h"}}'], "extra_headers must be a table/object of header names"),
    ("dialogue-llm-api-key", ["dialogue", "eval", "--backend", "llm", "--guard-llm", "openai/x", "--llm-args", '{"api_key": "sk-X"}'], "--llm-args sets 'api_key'"),
]

CASES = CASES + MORE_CASES + RELIABILITY_CASES

# A minimal τ² results file (one simulation) and the importer's hostile variants: name -> the
# simulation's changed fields.
RESULTS_SIMULATION = {
    "id": "s0", "task_id": "0", "trial": 0, "termination_reason": "user_stop",
    "reward_info": {"reward": 1.0}, "messages": [{"role": "assistant", "content": "Hello, how can I help?"}],
}
RESULTS_VARIANTS: dict[str, dict[str, object]] = {
    "r_ok.json": {},
    "r_content.json": {"messages": [{"role": "assistant", "content": {"text": "hi"}}]},
    "r_reward_5.json": {"reward_info": {"reward": 5}},
    "r_reward_inf.json": {"reward_info": {"reward": float("inf")}},
    "r_reward_nan.json": {"reward_info": {"reward": float("nan")}},
    "r_reward_neg.json": {"reward_info": {"reward": -1}},
    "r_reward_str.json": {"reward_info": {"reward": "1.0"}},
    "r_trial_bool.json": {"trial": True},
    "r_trial_huge.json": {"trial": 10**30},
    "r_trial_neg.json": {"trial": -1},
}

# Config files of the battery: name -> TOML text.
CONFIGS = {
    "c_trials0.toml": "trials = 0\n",
    "c_trials_huge.toml": "trials = 1000000000\n",
    "c_trials_text.toml": 'trials = "four"\n',
    "c_seed.toml": "seed = -7\n",
    "c_workers.toml": "workers = 2.5\n",
    "c_retries.toml": "max_retries = 1000\n",
    "c_errors.toml": "max_errors = 0\n",
    "c_guard_retries.toml": "max_guard_retries = -1\n",
    "c_cost_nan.toml": "max_cost = nan\n",
    "c_rate_nan.toml": '[rate_limits]\n"gpt-4.1" = [nan]\n',
    "c_rate_neg.toml": '[rate_limits]\n"gpt-4.1" = [-60.0]\n',
    "c_rate_three.toml": '[rate_limits]\n"gpt-4.1" = [60, 1000, 5]\n',
    "c_domains.toml": "domains = []\n",
    "c_domain.toml": 'domain = "bank"\n',
    "c_task_ids.toml": "task_ids = []\n",
    "c_concurrency.toml": "concurrency = 0\n",
    "c_num_tasks.toml": "num_tasks = 0\n",
    "c_cache.toml": 'cache = "  "\n',
    "c_strategy.toml": 'strategy = ""\n',
    "c_llm_args.toml": "llm_args = [1, 2]\n",
    "c_header.toml": '[llm_args.agent.extra_headers]\nAuthorization = "Bearer x"\n',
    "c_name.toml": 'name = "a/b"\n',
    "c_attack.toml": 'attack = "bribe"\n',
    "empty.toml": "",
}


CASE_TIMEOUT_S = 120  # generous: the first case that loads τ² pays its import on a busy machine


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = tmp_path_factory.mktemp("bad")
    tasks = [TaskSpec("airline", "0", [True, False]), TaskSpec("airline", "1", [True, True])]
    write_run(t, "good", tasks)
    write_run(t, "good2", tasks)
    write_run(t, "unreadable", tasks)
    (t / "unreadable" / "simulations.jsonl").unlink()
    (t / "unreadable" / "simulations.jsonl").mkdir()  # cannot be read as a file (even by root)
    (t / "corrupt").mkdir()
    (t / "corrupt" / "manifest.json").write_text("{not json")
    (t / "emptydir").mkdir()
    (t / "afile").write_text("a regular file\n")
    (t / "bad.toml").write_text("this is = = not toml")
    (t / "latin1.toml").write_bytes('name = "caf\u00e9"\n'.encode("latin-1"))
    (t / "latin1.jsonl").write_bytes('{"domain": "caf\u00e9"}\n'.encode("latin-1"))
    (t / "typo.toml").write_text('stratgy = "react"\n')
    (t / "agnet.toml").write_text("[llm_args.agnet]\ntemperature = 0\n")
    (t / "apikey.toml").write_text('[llm_args.agent]\napi_key = "sk-in-a-file"\n')
    (t / "rate7.toml").write_text('name = "seven"\n[rates]\nskip_read = 7.0\n')
    (t / "floors.toml").write_text('schema_version = 1\n[[floor]]\nmetric = "pass^1"\nmin = 0.1\n')
    (t / "good.jsonl").write_text(GOOD_PROBE + "\n")
    (t / "badtool.jsonl").write_text(BAD_TOOL_PROBE + "\n")
    # The 2026 battery: files that are not regular files, hostile archives, config values.
    os.mkfifo(t / "fifo")
    os.mkfifo(t / "fifo.toml")
    (t / "badcache" / "cache.db").mkdir(parents=True)
    for name, text in CONFIGS.items():
        (t / name).write_text(text)
    inflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(inflater.compress(bytes(2**20)) for _ in range(32)) + inflater.flush()
    (t / "bomb.json.gz").write_bytes(bomb)  # 32 MiB of zeros in ~32 KB: over the 100x ratio limit
    (t / "corrupt.json.gz").write_bytes(b"\x1f\x8b" + b"not deflate data" * 4)
    (t / "truncated.json.gz").write_bytes(gzip.compress(b'{"simulations": []}' * 200)[:40])
    (t / "nosims.json").write_text('{"info": {}}')
    (t / "list.json").write_text("[]")
    (t / "badinfo.json").write_text('{"info": 5, "simulations": []}')
    (t / "badfloors.toml").write_text('schema_version = 1\n[[floor]]\nmetric = "accuracy"\nmin = 0.1\n')
    (t / "empty.jsonl").write_text("")
    (t / "badlabel.jsonl").write_text(GOOD_PROBE.replace('"refuse"', '"maybe"') + "\n")
    # Issue 38: run folders whose files are not regular files or hold impossible numbers.
    for name in ("zerorun", "fiforun", "fifolock", "fifomanifest", "zeroindex", "hugetrials"):
        write_run(t, name, tasks)
        manifest = json.loads((t / name / "manifest.json").read_text())  # resumable: a real backend
        manifest["config"] = {**manifest.get("config", {}), "backend": "sequential"}
        (t / name / "manifest.json").write_text(json.dumps(manifest))
    (t / "zerorun" / "simulations.jsonl").unlink()
    (t / "zerorun" / "simulations.jsonl").symlink_to("/dev/zero")
    (t / "fiforun" / "simulations.jsonl").unlink()
    os.mkfifo(t / "fiforun" / "simulations.jsonl")
    (t / "fifolock" / ".lock").unlink(missing_ok=True)
    os.mkfifo(t / "fifolock" / ".lock")
    (t / "fifomanifest" / "manifest.json").unlink()
    os.mkfifo(t / "fifomanifest" / "manifest.json")
    (t / "zeroindex" / "outcomes-v1.jsonl").unlink(missing_ok=True)
    (t / "zeroindex" / "outcomes-v1.jsonl").symlink_to("/dev/zero")
    manifest = json.loads((t / "hugetrials" / "manifest.json").read_text())
    (t / "hugetrials" / "manifest.json").write_text(json.dumps({**manifest, "trials": 1e12, "status": "interrupted"}))
    (t / "casesdir").mkdir()
    os.mkfifo(t / "casesdir" / "a.jsonl")
    (t / "links").mkdir()
    (t / "links" / "out.html").symlink_to(t / "afile")  # a link out of its own folder
    (t / "deep.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    for name, changes in RESULTS_VARIANTS.items():
        (t / name).write_text(json.dumps({"info": {}, "simulations": [{**RESULTS_SIMULATION, **changes}]}))
    surrogate = json.dumps({"info": {}, "simulations": [RESULTS_SIMULATION]}).replace("Hello", "Hel\\ud800lo")
    (t / "r_surrogate.json").write_text(surrogate)
    return t


def test_the_battery_has_at_least_250_inputs_and_the_docs_list_them():
    assert len(CASES) >= 250 and len({c[0] for c in CASES}) == len(CASES)
    table = (Path(__file__).resolve().parent.parent / "docs" / "bad_inputs.md").read_text(encoding="utf-8")
    assert [c[0] for c in CASES if f"`{c[0]}`" not in table] == []


@pytest.mark.parametrize("args, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line_exit_2_nothing_written(
    args: list[str], fragment: str, scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    from tauguard.cli.main import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(scratch)  # a default --out (runs/) would land here
    argv = [a.replace("{t}", str(scratch)) for a in args]
    monkeypatch.setattr(sys, "argv", ["tauguard", *argv])
    before = _snapshot(scratch)

    def hung(*_: object) -> None:
        raise TimeoutError(f"no answer within {CASE_TIMEOUT_S} s: {argv}")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, CASE_TIMEOUT_S)  # a hang fails the case, never the suite
    try:
        with pytest.raises(SystemExit) as exit_:
            main()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    fragment = fragment.replace("{t}", str(scratch))
    assert exit_.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err
    assert "Traceback" not in out + err
    assert _snapshot(scratch) == before  # nothing written


def test_compare_a_run_with_itself_says_so(scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", "compare", str(scratch / "good"), str(scratch / "good")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    assert "is the same run as" in capsys.readouterr().err


def test_show_a_run_without_evaluated_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    from tauguard.cli.main import main

    write_run(tmp_path, "errors", [TaskSpec("airline", "0", ["error"])])
    monkeypatch.setattr(sys, "argv", ["tauguard", "show", str(tmp_path / "errors")])
    with pytest.raises(SystemExit):
        main()
    out = capsys.readouterr().out
    assert "no evaluated trial yet" in out and "1..0" not in out


assert os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP") == "True"  # conftest keeps litellm offline
