"""Regenerate docs/bad_inputs.md from tests/test_bad_inputs.py: OUT=docs/bad_inputs.md python bench/bad_inputs_table.py"""
import io
import os
import sys
import contextlib
import tempfile
from pathlib import Path
sys.path.insert(0, "tests")
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.pop("OPENAI_API_KEY", None)
TARGET = Path(os.environ.get("OUT", "docs/bad_inputs.md")).resolve()
import test_bad_inputs as T  # noqa: E402 (found through the sys.path entry above)
from tauguard.cli.main import main  # noqa: E402 (after the environment is set: litellm reads it on import)

class F:
    def mktemp(self, name):
        return Path(tempfile.mkdtemp(prefix=name))
scratch = T.scratch.__wrapped__(F())
os.chdir(scratch)
rows = []
for cid, args, _fragment in T.CASES:
    argv = [a.replace("{t}", str(scratch)) for a in args]
    sys.argv = ["tauguard", *argv]
    err = io.StringIO()
    out = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code
    line = err.getvalue().strip().replace(str(scratch), "T")
    shown = " ".join("'" + a.replace(str(scratch), "T") + "'" if (" " in a or a == "" or "{" in a) else a.replace(str(scratch), "T") for a in argv)
    if len(shown) > 90:
        shown = shown[:87] + "..."
    shown = shown.replace("\n", "\\n").replace("\x1b", "\\x1b")
    rows.append((cid, shown, code, line))
with open(TARGET, "w") as fh:
    fh.write("""# Bad inputs: one `error:` line, exit 2, nothing written

Every row is a case of `tests/test_bad_inputs.py` (one parametrised test, run in-process
through the `tauguard` entry point). Each must print exactly one `error:` line on stderr, exit
with code 2, print no traceback and write nothing (the test compares the scratch folder
before and after). `T` is the test's scratch folder; its fixtures are: `good`, `good2` (small
synthetic runs), `corrupt` (manifest is not JSON), `unreadable` (`simulations.jsonl` is a
folder), `emptydir`, `afile` (a regular file), `bad.toml` (not TOML), `latin1.toml` /
`latin1.jsonl` (not UTF-8), `typo.toml` (`stratgy = ...`), `agnet.toml` (a misspelled
`llm_args` role), `apikey.toml` (`api_key` in `llm_args`), `rate7.toml` (a fault rate of 7.0),
`good.jsonl` / `badtool.jsonl` (probe files; the second calls a tool airline lacks).
The 2026 battery (cases 82 on, issue 26) adds `fifo` / `fifo.toml` (named pipes), `badcache`
(a cache folder whose `cache.db` is a folder), `c_*.toml` (one bad config value each, see
`CONFIGS` in the test), `empty.toml`, `bomb.json.gz` (32 MiB of zeros in ~32 KB),
`corrupt.json.gz`, `truncated.json.gz`, `nosims.json`, `list.json` (`[]`), `badinfo.json`,
`badfloors.toml` (an unknown metric), `empty.jsonl` and `badlabel.jsonl`; `/dev/zero` and
`/dev/null` stand for devices. Every case runs under a 120 s timer: a hang fails it.
The issue-38 battery (cases 353 on, `RELIABILITY_CASES`) adds run folders whose files are not
regular files (`zerorun`: `simulations.jsonl` a symlink to `/dev/zero`; `fiforun`,
`fifomanifest`, `fifolock`: a FIFO as the records, the manifest or `.lock`; `zeroindex`: the
outcome index a symlink to `/dev/zero`), `hugetrials` (`"trials": 1e12` in the manifest),
`casesdir` (a case folder holding a FIFO), `links/out.html` (a link to a file in another
folder), `deep.toml` (arrays nested 50,000 deep) and `r_*.json` (one-simulation τ² results
files with an object as message content, a lone surrogate, rewards 5, inf, NaN, -1 and
`"1.0"`, trials `true`, 10^30 and -1).
`OPENAI_API_KEY` is unset.

Regenerate the table after changing a message: the test names the expected fragment of
each line.

| # | case | command (`tauguard ...`) | exit | the one line printed |
|---|---|---|---|---|
""")
    for i, (cid, shown, code, line) in enumerate(rows, 1):
        s2 = shown.replace("|", "\\|")
        l2 = line.replace("|", "\\|")
        fh.write(f"| {i} | `{cid}` | `{s2}` | {code} | {l2} |\n")
print(len(rows), sum(1 for r in rows if r[2] == 2 and r[3].count("\n") == 0))
